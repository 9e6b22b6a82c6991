"""End to end on GitLab: a ``Push Hook`` to the default branch of a project without
``.ichor.yaml`` → one onboarding merge request on ``ichor/bootstrap`` carrying the proposed
files and the body; the next push finds it open and pushes nothing."""

from __future__ import annotations

import copy
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import ROOT, Bot, running_bot
from tests.e2e.test_gitlab_checks import GitLabScenario
from tests.fakeforge.gitlab import FakeGitLab
from tests.support.gitops import configmap

PUSH_FIXTURE = ROOT / "fixtures/webhooks/gitlab/push__go-gitlab.json"
BRANCH = "ichor/bootstrap"


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeGitLab]:
    with FakeGitLab(tmp_path / "forge-git") as running:
        yield running


class Unconfigured(GitLabScenario):
    """A project with a folder of manifests, documentation and no ``.ichor.yaml``."""

    def __init__(self, fake: FakeGitLab, bot: Bot, tmp_path: Path) -> None:
        super().__init__(fake, bot, tmp_path)
        self.head = self.work.commit(
            {
                "apps/web/deployment.yaml": configmap("web"),
                "apps/web/service.yaml": configmap("service"),
                "apps/api/settings.yaml": configmap("api"),
                "README.md": "hello\n",
            },
            "base",
        )
        self.work.publish(self.bare)

    def push(self, files: dict[str, str | None]) -> None:
        before, self.head = self.head, self.work.commit(files)
        self.work.publish(self.bare)
        payload: dict[str, Any] = copy.deepcopy(json.loads(PUSH_FIXTURE.read_text()))
        name = self.full_name.split("/")[1]
        web = f"{self.fake.url}/{self.full_name}"
        clone = self.fake.clone_url(self.full_name)
        payload["project"].update(
            id=self.project_id,
            name=name,
            path_with_namespace=self.full_name,
            web_url=web,
            homepage=web,
            git_http_url=clone,
            http_url=clone,
            default_branch="main",  # the recorded delivery's project says "master"
        )
        payload["repository"].update(name=name, git_http_url=clone, homepage=web)
        payload.update(
            project_id=self.project_id,
            ref="refs/heads/main",
            before=before,
            after=self.head,
            checkout_sha=self.head,
        )
        assert self.bot.post("push", payload, forge="gitlab") == 202
        run = self.work_once()
        assert self.fake.token not in run.log

    def proposals(self) -> list[dict[str, Any]]:
        return [m for m in self.fake.merge_requests(self.full_name) if m["source_branch"] == BRANCH]

    def pushes(self) -> int:
        return len(self.fake.git.posts("git-receive-pack"))

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.bare), *args], check=True, capture_output=True, text=True
        ).stdout


@pytest.fixture
def repo(fake: FakeGitLab, bot: Bot, tmp_path: Path) -> Iterator[Unconfigured]:
    scenario = Unconfigured(fake, bot, tmp_path)
    yield scenario
    for key in bot.redis.scan_iter(f"ichor:onboarding:*:gitlab:{scenario.full_name}"):
        bot.redis.delete(key)


def test_a_push_to_the_default_branch_proposes_once(repo: Unconfigured) -> None:
    repo.push({"README.md": "changed\n"})
    (opened,) = repo.proposals()
    assert opened["target_branch"] == "main" and opened["state"] == "opened"
    assert opened["title"] == "ichor: guard this repository's GitTarget paths"
    body = opened["description"]
    assert "| target | path | verdict | objects found |" in body
    assert "| `apps` | <code>apps</code> |" in body
    # The merge request's branch is one commit on main with the proposed files.
    main = repo.git("rev-parse", "main").strip()
    assert repo.git("rev-parse", f"{BRANCH}^").strip() == main
    changed = set(repo.git("diff", "--name-only", main, BRANCH).split())
    assert changed == {".ichor.yaml", "apps/README.md", "apps/.gittargetignore"}
    assert "path: apps" in repo.git("show", f"{BRANCH}:.ichor.yaml")
    assert repo.fake.statuses(repo.full_name, repo.head) == []  # not configured: no status

    # A second push: the open merge request is found, nothing is pushed or opened.
    pushes = repo.pushes()
    repo.push({"README.md": "again\n"})
    assert len(repo.proposals()) == 1 and repo.pushes() == pushes
    repo.fake.assert_clean()
