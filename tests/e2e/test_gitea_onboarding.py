"""End to end on Gitea: a push to the default branch of a repository without ``.ichor.yaml``
→ one onboarding pull request on ``ichor/bootstrap``; the next push finds it and pushes
nothing."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.gitea_scenario import GiteaScenario, _point_repository
from tests.e2e.harness import ROOT, Bot, running_bot
from tests.fakeforge.gitea import FakeGitea
from tests.support.gitops import configmap

PUSH_FIXTURE = ROOT / "fixtures/webhooks/gitea/push__branch.json"


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeGitea]:
    with FakeGitea(tmp_path / "forge-git", flavor="gitea") as running:
        yield running


class Unconfigured(GiteaScenario):
    def __init__(self, fake: FakeGitea, bot: Bot, tmp_path: Path) -> None:
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
        _point_repository(payload, self.fake, self.full_name)
        payload.update(ref="refs/heads/main", before=before, after=self.head)
        assert self.bot.post("push", payload, forge=self.fake.flavor) == 202
        self.work_once()

    def proposals(self) -> list[dict[str, Any]]:
        return [p for p in self.fake.pulls(self.full_name) if p["head"]["ref"] == "ichor/bootstrap"]


@pytest.fixture
def repo(fake: FakeGitea, bot: Bot, tmp_path: Path) -> Iterator[Unconfigured]:
    scenario = Unconfigured(fake, bot, tmp_path)
    yield scenario
    for key in bot.redis.scan_iter(f"ichor:onboarding:*:gitea:{scenario.full_name}"):
        bot.redis.delete(key)


def test_a_push_to_the_default_branch_proposes_once(repo: Unconfigured) -> None:
    repo.push({"README.md": "changed\n"})
    opened = repo.proposals()
    assert len(opened) == 1, repo.runs[-1].log[-3000:]
    assert opened[0]["base"]["ref"] == "main"
    assert "| `apps` | <code>apps</code> |" in opened[0]["body"]
    receive_packs = len(repo.fake.git.posts("git-receive-pack"))
    repo.push({"README.md": "again\n"})
    assert len(repo.proposals()) == 1
    assert len(repo.fake.git.posts("git-receive-pack")) == receive_packs
