"""What the reconciler and the redeliveries ask of each forge (design.md 7), on each forge's
fake, every request checked against the forge's own API description (GitHub, Gitea, Forgejo)
or its documented rules (GitLab): the repositories the bot reaches, their open pull requests
(GitHub's by a conditional request, whose 304 costs no rate limit), what a head shows of the
check, and GitHub's webhook deliveries asked for again."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.forges.base import (
    CheckOutput,
    Conclusion,
    ForgeAdapter,
    HeadCheck,
    OpenPulls,
    Reconciling,
)
from bot.forges.gitea.adapter import GiteaForge
from bot.forges.github.adapter import GitHubForge
from bot.forges.github.redelivery import HookDelivery
from bot.forges.gitlab.adapter import GitLabForge
from bot.forges.http.seam import RateLimit
from bot.repos import ForgeKind, RepoRef
from tests.fakeforge import FakeGitHub
from tests.fakeforge.gitea import FakeGitea
from tests.fakeforge.gitlab import FakeGitLab
from tests.fakeforge.httpserver import LocalServer, Request, Response

FULL = "octo/gitops"
SHA, BASE = "a" * 40, "b" * 40
PULLS = [(1, "closed"), (2, "open"), (3, "open"), (5, "open")]


def reconciled(forge: ForgeAdapter, repo: RepoRef) -> dict[str, Any]:
    """The forge-neutral part: listing, and a head's check from nothing to a verdict."""
    assert isinstance(forge, Reconciling)
    found: dict[str, Any] = {
        "repositories": forge.repositories(limit=10),
        "all": forge.open_pull_requests(repo, limit=10),
        "two": forge.open_pull_requests(repo, limit=2),
        "none": forge.head_check(repo, SHA),
    }
    check = forge.start_check(repo, SHA, external_id="d1")
    found["running"] = forge.head_check(repo, SHA)
    forge.complete_check(repo, check, CheckOutput(Conclusion.FAILURE, "refused", "s", "t"))
    found["final"] = forge.head_check(repo, SHA)
    return found


def check(found: dict[str, Any], repo: RepoRef) -> None:
    (listed,) = [r for r in found["repositories"] if r.full_name == FULL]
    assert (listed.forge, listed.default_branch, listed.installation_id) == (
        repo.forge,
        "main",
        repo.installation_id,
    )
    assert listed.clone_url and listed.clone_url.endswith(f"/{FULL}.git")
    every: OpenPulls = found["all"]
    assert sorted(p.number for p in every.pulls) == [2, 3, 5] and not every.more
    assert {p.head_sha for p in every.pulls} == {SHA} and {p.base_ref for p in every.pulls} == {
        "main"
    }
    assert len(found["two"].pulls) == 2 and found["two"].more
    assert (found["none"], found["running"], found["final"]) == (
        HeadCheck.NONE,
        HeadCheck.RUNNING,
        HeadCheck.FINAL,
    )


# ---------------------------------------------------------------------------- GitHub


@pytest.fixture
def github(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "git") as fake:
        fake.add_repo(FULL, installation_id=42)
        fake.add_repo("octo/other", installation_id=42)
        fake.add_repo("elsewhere/gitops", installation_id=43)
        for n, state in PULLS:
            fake.add_pull(FULL, n, head_sha=SHA, base_sha=BASE, state=state)
        yield fake
        fake.assert_clean()


def github_forge(fake: FakeGitHub, rates: list[tuple[str, RateLimit]]) -> GitHubForge:
    return GitHubForge(
        app_id=fake.app_id,
        private_key_pem=fake.private_key_pem,
        api_url=fake.url,
        web_url=fake.web_url,
        rates=lambda bucket, rate: rates.append((bucket, rate)),
    )


def test_github(github: FakeGitHub) -> None:
    rates: list[tuple[str, RateLimit]] = []
    forge = github_forge(github, rates)
    repo = RepoRef(ForgeKind.GITHUB, FULL, installation_id=42)
    try:
        found = reconciled(forge, repo)
    finally:
        forge.close()
    check(found, repo)
    names = sorted((r.full_name, r.installation_id) for r in found["repositories"])
    assert names == [("elsewhere/gitops", 43), ("octo/gitops", 42), ("octo/other", 42)]
    # Every answer's rate limit reached the observer, under the bucket it spends.
    assert {bucket for bucket, _ in rates} == {"app", "installation 42", "installation 43"}


def test_github_lists_pull_requests_again_only_when_they_changed(github: FakeGitHub) -> None:
    rates: list[tuple[str, RateLimit]] = []
    forge = github_forge(github, rates)
    repo = RepoRef(ForgeKind.GITHUB, FULL, installation_id=42)
    try:
        first = forge.open_pull_requests(repo, limit=10)
        left = rates[-1][1].remaining
        again = forge.open_pull_requests(repo, limit=10, tag=first.tag)
        assert rates[-1][1].remaining == left  # a 304 is not counted against the limit
        github.update_pull(FULL, 3, head_sha="c" * 40)
        changed = forge.open_pull_requests(repo, limit=10, tag=first.tag)
    finally:
        forge.close()
    assert first.tag and not first.unchanged
    assert again == OpenPulls(tag=first.tag, unchanged=True)
    assert not changed.unchanged and changed.tag != first.tag
    assert {p.number: p.head_sha for p in changed.pulls}[3] == "c" * 40
    statuses = [c.summary().rsplit(" ", 1)[1] for c in github.calls if c.path.endswith("/pulls")]
    assert statuses == ["200", "304", "200"]


class Receiver:
    """A webhook receiver on loopback: what it was sent, answered ``status``."""

    def __init__(self, status: int = 202) -> None:
        self.status = status
        self.received: list[Request] = []
        self.server = LocalServer(self.answer)

    def answer(self, req: Request) -> Response:
        self.received.append(req)
        return Response(self.status, {"status": "queued"})


def test_github_deliveries_are_listed_and_asked_for_again(github: FakeGitHub) -> None:
    receiver = Receiver()
    receiver.server.start()
    try:
        github.set_webhook(receiver.server.url + "/webhooks/github", "s3cret")
        payload = {"action": "opened", "installation": {"id": 42}}
        payload["repository"] = {"full_name": FULL}
        lost = github.add_delivery("pull_request", payload, status_code=502, at=1000.0)
        github.add_delivery("ping", {}, status_code=200, at=1001.0)
        forge = github_forge(github, [])
        try:
            listed = forge.recent_deliveries(since=999.0, max_pages=3)
            forge.redeliver(lost["id"])
            after = forge.recent_deliveries(since=0.0, max_pages=3)
        finally:
            forge.close()
    finally:
        receiver.server.stop()
    assert listed[1] == HookDelivery(
        lost["id"],
        lost["guid"],
        1000.0,
        False,
        502,
        "pull_request",
        "opened",
        42,
        github.repo_id(FULL),
    )
    assert [d.event for d in listed] == ["ping", "pull_request"]  # newest first
    (sent,) = receiver.received
    assert sent.headers["x-github-delivery"] == lost["guid"]  # a redelivery keeps its GUID
    digest = hmac.new(b"s3cret", sent.body, hashlib.sha256).hexdigest()
    assert sent.headers["x-hub-signature-256"] == f"sha256={digest}"
    again = after[0]
    assert (again.guid, again.redelivery, again.status_code) == (lost["guid"], True, 202)


def test_github_deliveries_stop_at_the_window_and_the_page_bound(github: FakeGitHub) -> None:
    for n in range(250):
        github.add_delivery("push", {}, status_code=502, at=1000.0 + n)
    forge = github_forge(github, [])
    try:
        recent = forge.recent_deliveries(since=1200.0, max_pages=5)
        bounded = forge.recent_deliveries(since=0.0, max_pages=2)
    finally:
        forge.close()
    assert [d.delivered_at for d in recent] == [1000.0 + n for n in range(249, 199, -1)]
    assert len(bounded) == 200
    pages = [c for c in github.calls if c.path == "/app/hook/deliveries"]
    assert len(pages) == 1 + 2  # the window ended within the first page


# ---------------------------------------------------------------------------- GitLab


def test_gitlab() -> None:
    with FakeGitLab() as fake:
        fake.add_project(FULL, project_id=1)
        fake.add_project("octo/archived", project_id=2)
        fake.add_project("octo/reader", project_id=3)
        fake.archive_project("octo/archived")
        fake.add_member("octo/reader", fake.bot_username, 20)  # a Reporter may not post
        for n, state in PULLS:
            gl_state = "opened" if state == "open" else state
            fake.add_merge_request(FULL, n, SHA, BASE, f"feature-{n}", "main", state=gl_state)
        repo = RepoRef(ForgeKind.GITLAB, FULL, id="1")
        forge = GitLabForge(url=fake.url, token=fake.token, timeout=5)
        try:
            found = reconciled(forge, repo)
        finally:
            forge.close()
        check(found, repo)
        assert [r.full_name for r in found["repositories"]] == [FULL]
        assert found["repositories"][0].id == "1"
        assert fake.validation_errors == []


# ---------------------------------------------------------------------------- Gitea


@pytest.mark.parametrize("flavor", ["gitea", "forgejo"])
def test_gitea(flavor: Any, tmp_path: Path) -> None:
    with FakeGitea(tmp_path / "git", flavor=flavor) as fake:
        fake.add_repo(FULL)
        fake.add_repo("octo/read-only")
        fake.set_permission("octo/read-only", fake.bot_login, "read")
        for n, state in PULLS:
            fake.add_pull(FULL, n, head_sha=SHA, base_sha=BASE, state=state)
        repo = RepoRef(ForgeKind.GITEA, FULL, clone_url=fake.clone_url(FULL))
        forge = GiteaForge(url=fake.url, token=fake.token)
        try:
            found = reconciled(forge, repo)
        finally:
            forge.close()
        check(found, repo)
        assert [r.full_name for r in found["repositories"]] == [FULL]
        fake.assert_clean()
