"""End to end on GitHub: a push to the default branch of a repository without ``.ichor.yaml``
→ serve → Redis → a real worker → one onboarding pull request on ``ichor/bootstrap``, exactly
once; never again after it was closed; and ``ichor-bot onboard`` proposes again on request."""

from __future__ import annotations

import copy
import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import BIN, ROOT, Bot, WorkerRun, running_bot
from tests.fakeforge import FakeGitHub
from tests.fakeforge.fixtures import fake_github  # noqa: F401 - the fixture
from tests.support.gitops import configmap
from tests.support.gitrepo import WorkRepo

PUSH_FIXTURE = ROOT / "fixtures/webhooks/github/push__branch.json"
BRANCH = "ichor/bootstrap"
BOOTSTRAP = ("README.md", ".gittargetignore")


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


class Unconfigured:
    """A GitOps repository with a folder of manifests, documentation and no ``.ichor.yaml``."""

    def __init__(self, fake: FakeGitHub, bot: Bot, tmp_path: Path) -> None:
        self.fake, self.bot, self.tmp_path = fake, bot, tmp_path
        self.full_name = f"e2e-{uuid.uuid4().hex[:8]}/gitops"
        bot.repositories.add(self.full_name)
        fake.add_repo(self.full_name, installation_id=42)
        self.work = WorkRepo(tmp_path / "work")
        self.data_dir = tmp_path / "worker-data"
        self.bare = fake.make_bare_repo(self.full_name)
        self.head = self.work.commit(
            {
                "clusters/prod/v1/configmaps/web/settings.yaml": configmap("settings"),
                "clusters/prod/v1/configmaps/web/other.yaml": configmap("other"),
                "clusters/staging/v1/configmaps/web/staged.yaml": configmap("staged"),
                "docs/guide.md": "how we deploy\n",
                "README.md": "hello\n",
            },
            "base",
        )
        self.work.publish(self.bare)

    def push(self, files: dict[str, str | None]) -> WorkerRun:
        before = self.head
        self.head = self.work.commit(files)
        self.work.publish(self.bare)
        return self.deliver_push(before)

    def deliver_push(self, before: str) -> WorkerRun:
        """The ``push`` delivery of main moving from ``before`` to :attr:`head`, worked off."""
        payload: dict[str, Any] = copy.deepcopy(json.loads(PUSH_FIXTURE.read_text()))
        owner, name = self.full_name.split("/")
        clone = self.fake.clone_url(self.full_name)
        repo = payload["repository"]
        repo.update(full_name=self.full_name, name=name, clone_url=clone, default_branch="main")
        repo.update(html_url=clone.removesuffix(".git"), master_branch="main")
        repo["owner"].update(login=owner, name=owner)
        payload.update(ref="refs/heads/main", before=before, after=self.head)
        payload.update(created=False, deleted=False, installation={"id": 42})
        assert self.bot.post("push", payload) == 202
        run = self.bot.run_worker(self.fake.env(), self.data_dir)
        assert run.code == 0, run.log
        assert "ghs_" not in run.log
        return run

    def proposals(self) -> list[dict[str, Any]]:
        return [p for p in self.fake.pulls(self.full_name) if p["head"]["ref"] == BRANCH]

    def pushes(self) -> int:
        return len(self.fake.git.posts("git-receive-pack"))

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.bare), *args], check=True, capture_output=True, text=True
        ).stdout

    def onboard(self) -> subprocess.CompletedProcess[str]:
        """``ichor-bot onboard`` in its own process, with the worker's settings."""
        env = self.bot._env({**self.fake.env(), "ICHOR_DATA_DIR": str(self.data_dir)})
        argv = [str(BIN / "ichor-bot"), "onboard", "github", self.full_name, "--installation"]
        return subprocess.run(
            [*argv, "42"], env=env, capture_output=True, text=True, timeout=120, check=False
        )


@pytest.fixture
def repo(fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> Iterator[Unconfigured]:  # noqa: F811
    scenario = Unconfigured(fake_github, bot, tmp_path)
    yield scenario
    for key in bot.redis.scan_iter(f"ichor:onboarding:*:github:{scenario.full_name}"):
        bot.redis.delete(key)


def test_a_push_proposes_once_and_never_after_a_decline(repo: Unconfigured) -> None:
    run = repo.push({"README.md": "changed\n"})
    opened = repo.proposals()
    assert len(opened) == 1, run.log[-3000:]
    pull = opened[0]
    assert pull["base"]["ref"] == "main" and pull["state"] == "open"
    assert pull["title"] == "ichor: guard this repository's GitTarget paths"
    body = pull["body"]
    # The gate's verdict per proposed target, in the body's table.
    assert "| target | path | verdict | objects found |" in body
    # prod and staging are environments, each a target of its own.
    assert "| `clusters-prod` | <code>clusters/prod</code> | accepted | 2 of 2 doc" in body
    assert "| `clusters-staging` | <code>clusters/staging</code> | accepted | 1 of 1 doc" in body
    assert "**Open pull requests**: none into <code>main</code>" in body
    main = repo.git("rev-parse", "main").strip()
    assert repo.git("rev-parse", f"{BRANCH}^").strip() == main
    changed = set(repo.git("diff", "--name-only", main, BRANCH).split())
    assert changed == {
        ".ichor.yaml",
        *(f"clusters/{env}/{name}" for env in ("prod", "staging") for name in BOOTSTRAP),
    }
    config = repo.git("show", f"{BRANCH}:.ichor.yaml")
    assert "path: clusters/prod" in config and "path: clusters/staging" in config
    assert repo.fake.check_runs(repo.full_name) == []  # not configured: the check stays silent

    # A second push: the open proposal is found, nothing is pushed.
    pushes = repo.pushes()
    repo.push({"README.md": "again\n"})
    assert len(repo.proposals()) == 1 and repo.pushes() == pushes

    # Closed unmerged: no trigger proposes again.
    repo.fake.update_pull(repo.full_name, pull["number"], state="closed")
    repo.push({"README.md": "and again\n"})
    assert [p["state"] for p in repo.proposals()] == ["closed"] and repo.pushes() == pushes
    repo.push({"README.md": "once more\n"})
    assert len(repo.proposals()) == 1 and repo.pushes() == pushes

    # On request, it is proposed again: a new pull request from a new push.
    done = repo.onboard()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pr-opened" in done.stdout
    states = sorted(p["state"] for p in repo.proposals())
    assert states == ["closed", "open"] and repo.pushes() == pushes + 1
    assert repo.git("rev-parse", f"{BRANCH}^").strip() == repo.git("rev-parse", "main").strip()
    assert repo.fake.validation_errors == [] and repo.fake.auth_failures == []


def test_an_installation_proposes_for_each_repository_it_was_given(repo: Unconfigured) -> None:
    fixture = ROOT / "fixtures/webhooks/github/installation_repositories__added.json"
    payload: dict[str, Any] = copy.deepcopy(json.loads(fixture.read_text()))
    payload["installation"]["id"] = 42
    payload["repositories_added"][0].update(
        full_name=repo.full_name, name=repo.full_name.split("/")[1]
    )
    assert repo.bot.post("installation_repositories", payload) == 202
    run = repo.bot.run_worker(repo.fake.env(), repo.data_dir)
    assert run.code == 0, run.log
    opened = repo.proposals()
    assert len(opened) == 1 and opened[0]["base"]["ref"] == "main", run.log[-3000:]
    # Its default branch came from the remote's HEAD; a later push finds the open proposal.
    pushes = repo.pushes()
    repo.push({"README.md": "changed\n"})
    assert len(repo.proposals()) == 1 and repo.pushes() == pushes
