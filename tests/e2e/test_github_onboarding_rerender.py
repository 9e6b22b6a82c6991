"""End to end on GitHub (issue 22 item 4): the onboarding pull request says which open pull
requests the check would block today, and a push of an edited proposal to ``ichor/bootstrap``
rewrites its description with fresh verdicts, once per change, pushing nothing.

Real serve and worker processes; the behaviour is forge-neutral (the adapters list pull
requests and rewrite a description, each checked on its fake in tests/forges)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Bot, WorkerRun, running_bot
from tests.e2e.test_github_onboarding import BRANCH, PUSH_FIXTURE, Unconfigured
from tests.fakeforge import FakeGitHub
from tests.fakeforge.fixtures import fake_github  # noqa: F401 - the fixture


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


class WithOpenPulls(Unconfigured):
    """Two open pull requests into main: #7 adds a stray file to ``clusters/prod`` (the gate
    refuses it), #8 changes only the README (it touches no target)."""

    def __init__(self, fake: FakeGitHub, bot: Bot, tmp_path: Path) -> None:
        super().__init__(fake, bot, tmp_path)
        main = self.head
        for number, branch, files, title in [
            (7, "notes", {"clusters/prod/notes.txt": "todo\n"}, "Add notes"),
            (8, "docs", {"README.md": "better\n"}, "Docs"),
        ]:
            self.work.checkout(branch, create_from=main)
            head = self.work.commit(files, title)
            self.work.set_ref(f"refs/pull/{number}/head", head)
            fake.add_pull(
                self.full_name, number, head_sha=head, base_sha=main, head_ref=branch, title=title
            )
        self.work.checkout("main")
        self.work.publish(self.bare)

    def edit_proposal(self, files: dict[str, str | None]) -> tuple[str, str]:
        """Commit ``files`` on ``ichor/bootstrap`` as a person would; (before, after)."""
        self.work.git("fetch", "-q", str(self.bare), f"+refs/heads/{BRANCH}:refs/heads/{BRANCH}")
        before = self.work.git("rev-parse", BRANCH)
        self.work.checkout(BRANCH)
        after = self.work.commit(files, "edit the proposal")
        self.work.checkout("main")
        self.work.publish(self.bare)
        return before, after

    def deliver_branch_push(self, ref: str, before: str, after: str) -> WorkerRun:
        payload: dict[str, Any] = copy.deepcopy(json.loads(PUSH_FIXTURE.read_text()))
        owner, name = self.full_name.split("/")
        clone = self.fake.clone_url(self.full_name)
        repo = payload["repository"]
        repo.update(full_name=self.full_name, name=name, clone_url=clone, default_branch="main")
        repo.update(html_url=clone.removesuffix(".git"), master_branch="main")
        repo["owner"].update(login=owner, name=owner)
        payload.update(ref=ref, before=before, after=after)
        payload.update(created=False, deleted=False, installation={"id": 42})
        assert self.bot.post("push", payload) == 202
        run = self.bot.run_worker(self.fake.env(), self.data_dir)
        assert run.code == 0, run.log
        return run

    def patches(self, number: int) -> int:
        path = f"PATCH /repos/{self.full_name}/pulls/{number} "
        return sum(1 for call in self.fake.calls_summary() if call.startswith(path))


@pytest.fixture
def repo(fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> Iterator[WithOpenPulls]:  # noqa: F811
    scenario = WithOpenPulls(fake_github, bot, tmp_path)
    yield scenario
    for key in bot.redis.scan_iter(f"ichor:onboarding:*:github:{scenario.full_name}"):
        bot.redis.delete(key)


def test_the_open_pulls_are_judged_and_an_edit_re_renders_the_body(repo: WithOpenPulls) -> None:
    run = repo.push({"README.md": "changed\n"})
    (pull,) = repo.proposals()
    body = pull["body"]
    assert "**Open pull requests** into <code>main</code>: 1 of the 2 checked" in body, run.log
    assert "- #&#8203;7 Add notes: touches `clusters-prod`, refused at its head (1 error)" in body
    assert "- 1 more touches no target, or only targets that accept them" in body
    assert "| `clusters-staging` |" in body

    # A person renames a target, drops the other and ignores the stray file #7 adds.
    pushes = repo.pushes()
    config = "version: 1\ntargets:\n  - name: prod\n    path: clusters/prod\n"
    before, after = repo.edit_proposal(
        {".ichor.yaml": config, "clusters/prod/.gittargetignore": "/notes.txt\n"}
    )
    run = repo.deliver_branch_push(f"refs/heads/{BRANCH}", before, after)
    assert repo.patches(pull["number"]) == 1, run.log[-3000:]
    (edited,) = repo.proposals()
    body = edited["body"]
    assert "| `prod` | <code>clusters/prod</code> | accepted | 2 of 2 documents |" in body
    assert "clusters-staging" not in body and "clusters-prod" not in body
    assert "**Open pull requests** into <code>main</code>: 0 of the 2 checked" in body
    assert repo.pushes() == pushes  # nothing pushed: only the description changed
    assert repo.fake.check_runs(repo.full_name) == []  # still unconfigured: silent

    # The same push again (a redelivery, or the bot's own push): nothing to rewrite.
    repo.deliver_branch_push(f"refs/heads/{BRANCH}", before, after)
    assert repo.patches(pull["number"]) == 1
    # An edit that breaks the file is said, not hidden.
    before, after = repo.edit_proposal({".ichor.yaml": "version: 2\n"})
    repo.deliver_branch_push(f"refs/heads/{BRANCH}", before, after)
    (broken,) = repo.proposals()
    assert "the `.ichor.yaml` on this branch cannot be read" in broken["body"]
    assert repo.fake.validation_errors == [] and repo.fake.auth_failures == []
