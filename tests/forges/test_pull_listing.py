"""The open pull requests into a base, newest first, and a description rewritten in place, on
each forge's fake (issue 22 item 4: what the onboarding body says the check would block, and
its re-rendering when the proposal changes). Every request is checked against the forge's own
API description (GitHub, Gitea, Forgejo) or its documented rules (GitLab)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bot.forges.base import ForgeAdapter, PullRequestRef
from bot.forges.gitea.adapter import GiteaForge
from bot.forges.github.adapter import GitHubForge
from bot.forges.gitlab.adapter import GitLabForge
from bot.forges.local import LocalForge
from bot.repos import ForgeKind, RepoRef
from tests.fakeforge import FakeGitHub
from tests.fakeforge.gitea import FakeGitea, Flavor
from tests.fakeforge.gitlab import FakeGitLab

T = TypeVar("T")
FULL = "octo/gitops"
SHA, BASE = "a" * 40, "b" * 40


def run(forge: ForgeAdapter, body: Callable[[ForgeAdapter], T]) -> T:
    def main() -> T:
        try:
            return body(forge)
        finally:
            forge.close()

    return main()


def listed_numbers(refs: list[PullRequestRef]) -> list[int]:
    return [p.number for p in refs]


def scenario(forge: ForgeAdapter, repo: RepoRef) -> dict[str, Any]:
    found = {
        "all": forge.list_pull_requests(repo, "main", limit=10),
        "two": forge.list_pull_requests(repo, "main", limit=2),
        "other": forge.list_pull_requests(repo, "release", limit=10),
    }
    forge.update_pull_request_body(repo, 3, "fresh verdicts")
    return found


def check(found: dict[str, Any]) -> None:
    # 1 is closed and 4 goes into another base; newest first.
    assert listed_numbers(found["all"]) == [5, 3, 2]
    assert listed_numbers(found["two"]) == [5, 3]
    assert listed_numbers(found["other"]) == [4]
    assert found["all"][0].title == "Five"


@pytest.fixture
def github(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "git") as fake:
        fake.add_repo(FULL, installation_id=42)
        yield fake
        fake.assert_clean()


def test_github(github: FakeGitHub) -> None:
    for n, state, base, title in [
        (1, "closed", "main", "One"),
        (2, "open", "main", "Two"),
        (3, "open", "main", "Three"),
        (4, "open", "release", "Four"),
        (5, "open", "main", "Five"),
    ]:
        github.add_pull(
            FULL, n, head_sha=SHA, base_sha=BASE, state=state, base_ref=base, title=title
        )
    forge = GitHubForge(
        app_id=github.app_id,
        private_key_pem=github.private_key_pem,
        api_url=github.url,
        web_url=github.web_url,
    )
    repo = RepoRef(ForgeKind.GITHUB, FULL, installation_id=42)
    check(run(forge, lambda f: scenario(f, repo)))
    (three,) = (p for p in github.pulls(FULL) if p["number"] == 3)
    assert three["body"] == "fresh verdicts"


def test_gitlab() -> None:
    with FakeGitLab() as fake:
        fake.add_project(FULL, project_id=1)
        for n, state, base, title in [
            (1, "closed", "main", "One"),
            (2, "opened", "main", "Two"),
            (3, "opened", "main", "Three"),
            (4, "opened", "release", "Four"),
            (5, "opened", "main", "Five"),
        ]:
            fake.add_merge_request(
                FULL, n, SHA, BASE, f"feature-{n}", base, state=state, title=title
            )
        repo = RepoRef(ForgeKind.GITLAB, FULL, id="1")
        forge = GitLabForge(url=fake.url, token=fake.token, timeout=5)
        check(run(forge, lambda f: scenario(f, repo)))
        (three,) = (m for m in fake.merge_requests(FULL) if m["iid"] == 3)
        assert three["description"] == "fresh verdicts"
        assert fake.validation_errors == []


@pytest.mark.parametrize("flavor", ["gitea", "forgejo"])
def test_gitea(flavor: Flavor, tmp_path: Path) -> None:
    with FakeGitea(tmp_path / "git", flavor=flavor) as fake:
        fake.add_repo(FULL)
        for n, state, base, title in [
            (1, "closed", "main", "One"),
            (2, "open", "main", "Two"),
            (3, "open", "main", "Three"),
            (4, "open", "release", "Four"),
            (5, "open", "main", "Five"),
        ]:
            fake.add_pull(
                FULL, n, head_sha=SHA, base_sha=BASE, state=state, base_ref=base, title=title
            )
        repo = RepoRef(ForgeKind.GITEA, FULL, clone_url=fake.clone_url(FULL))
        forge = GiteaForge(url=fake.url, token=fake.token)
        check(run(forge, lambda f: scenario(f, repo)))
        (three,) = (p for p in fake.pulls(FULL) if p["number"] == 3)
        assert three["body"] == "fresh verdicts"
        fake.assert_clean()


def test_local(tmp_path: Path) -> None:
    forge = LocalForge(tmp_path)
    repo = RepoRef(ForgeKind.GITHUB, FULL)

    def body(f: ForgeAdapter) -> dict[str, Any]:
        for n, base in enumerate(["main", "main", "main", "release", "main"], start=1):
            f.open_pull_request(
                repo,
                head=f"b{n}",
                base=base,
                title=["One", "Two", "Three", "Four", "Five"][n - 1],
                body="",
            )
        return scenario(f, repo)

    found = run(forge, body)
    # The local forge closes nothing: all four into main are open.
    assert listed_numbers(found["all"]) == [5, 3, 2, 1]
    assert listed_numbers(found["other"]) == [4]
    assert run(LocalForge(tmp_path), lambda f: f.find_pull_request(repo, "b3", "main")) == (
        PullRequestRef(3, f"local://{FULL}/pulls/3", body="fresh verdicts")
    )
