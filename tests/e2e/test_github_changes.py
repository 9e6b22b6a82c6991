"""End to end on GitHub: change commands → serve → Redis → a real worker → a real ``git push``
(through ``git http-backend``, which requires the installation token) → a pull request on the
fake GitHub, exactly once."""

from __future__ import annotations

import copy
import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import ROOT, Bot, WorkerRun, pull_request_payload, running_bot
from tests.fakeforge import FakeGitHub
from tests.fakeforge.fixtures import fake_github  # noqa: F401 - the fixture
from tests.support.gitops import configmap
from tests.support.gitrepo import WorkRepo

CONFIG = """version: 1
targets:
  - name: prod
    path: clusters/prod
    approval: {kind: ConfigMap, field: data.state, reasonField: data.decision, fields: [data.mode]}
  - {name: staging, path: clusters/staging}
commands:
  min_permission: write
"""
SETTINGS = "clusters/prod/v1/configmaps/web/settings.yaml"
ORIGINAL = """# the web tier's settings
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings  # do not rename
  namespace: web
data:
  mode: prod
  state: pending
"""


COMMENT_FIXTURE = ROOT / "fixtures/webhooks/github/issue_comment__created-on-pr-go-scm.json"
AUTHOR, MAINTAINER, READER = "octocat", "maria", "rita"


class Commands:
    """A strict repository with one pull request, and the comments people write on it."""

    def __init__(
        self,
        fake: FakeGitHub,
        bot: Bot,
        tmp_path: Path,
        number: int = 7,
        *,
        config: str,
        extra: dict[str, str | None] | None = None,
    ) -> None:
        self.fake, self.bot, self.number = fake, bot, number
        self.full_name = f"e2e-{uuid.uuid4().hex[:8]}/gitops"
        bot.repositories.add(self.full_name)
        fake.add_repo(self.full_name, installation_id=42)
        fake.set_permission(self.full_name, AUTHOR, "write")
        fake.set_permission(self.full_name, MAINTAINER, "write")
        fake.set_permission(self.full_name, READER, "read")
        self.work = WorkRepo(tmp_path / "work")
        self.data_dir = tmp_path / "worker-data"
        self.bare = fake.make_bare_repo(self.full_name)
        files: dict[str, str | None] = {
            ".ichor.yaml": config,
            "clusters/prod/v1/configmaps/web/settings.yaml": configmap("settings"),
            "clusters/staging/v1/configmaps/web/settings.yaml": configmap("settings"),
            "README.md": "hello\n",
            **(extra or {}),
        }
        self.base = self.work.commit(files, "base")
        self.work.publish(self.bare)
        self.work.checkout("feature", create_from=self.base)
        self.head = ""
        self.opened = False

    def push(self, files: dict[str, str | None], *, check: bool = True) -> str:
        """A new head for the pull request, delivered and (unless ``check`` is off) checked."""
        self.head = self.work.commit(files)
        self.work.set_ref(f"refs/pull/{self.number}/head", self.head)
        self.work.publish(self.bare)
        if not self.opened:
            self.fake.add_pull(
                self.full_name, self.number, head_sha=self.head, base_sha=self.base, user=AUTHOR
            )
            self.opened = True
        else:
            self.fake.update_pull(self.full_name, self.number, head_sha=self.head)
        payload = pull_request_payload(
            full_name=self.full_name,
            clone_url=self.fake.clone_url(self.full_name),
            number=self.number,
            head_sha=self.head,
            base_sha=self.base,
        )
        payload["pull_request"]["user"]["login"] = AUTHOR
        assert self.bot.post("pull_request", payload) == 202
        if check:
            self.work_once()
        return self.head

    def comment(self, body: str, *, user: str = MAINTAINER, post: bool = True) -> dict[str, Any]:
        """``user`` comments ``body`` on the pull request: on the forge, and as a delivery."""
        comment = self.fake.add_comment(self.full_name, self.number, body, user=user)
        if post:
            self.deliver_comment(comment, body, user=user)
        return comment

    def deliver_comment(
        self, comment: dict[str, Any], body: str, *, user: str, action: str = "created"
    ) -> None:
        payload: dict[str, Any] = copy.deepcopy(json.loads(COMMENT_FIXTURE.read_text()))
        payload["action"] = action
        owner, name = self.full_name.split("/")
        repo = payload["repository"]
        clone = self.fake.clone_url(self.full_name)
        repo.update(full_name=self.full_name, name=name, clone_url=clone)
        repo.update(html_url=clone.removesuffix(".git"), default_branch="main")
        repo["owner"]["login"] = owner
        payload["issue"]["number"] = self.number
        payload["comment"].update(id=comment["id"], body=body, created_at=comment["created_at"])
        payload["comment"]["user"].update(login=user, type="Bot" if "[bot]" in user else "User")
        payload["sender"]["login"] = user
        payload["installation"] = {"id": 42}
        # An edit is answered and dropped at the door: nothing is queued for it.
        assert self.bot.post("issue_comment", payload) == (202 if action == "created" else 200)

    def work_once(self) -> WorkerRun:
        run = self.bot.run_worker(self.fake.env(), self.data_dir)
        assert run.code == 0, run.log
        assert "ghs_" not in run.log  # no installation token in what the worker printed
        return run

    def check_runs(self) -> list[dict[str, Any]]:
        runs: list[dict[str, Any]] = self.fake.check_runs(self.full_name)
        return runs

    def verdict(self) -> tuple[str, str]:
        run = self.check_runs()[-1]
        assert run["head_sha"] == self.head
        return run["conclusion"], run["output"]["title"]

    def replies(self) -> list[str]:
        return [
            c["body"]
            for c in self.fake.comments(self.full_name, self.number)
            if c["user"]["login"] == self.fake.bot_login and "ichor:summary" not in c["body"]
        ]

    def assert_clean(self) -> None:
        assert self.fake.validation_errors == []
        assert self.fake.auth_failures == []


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


@pytest.fixture
def pr(fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> Commands:  # noqa: F811
    scenario = Commands(fake_github, bot, tmp_path, config=CONFIG, extra={SETTINGS: ORIGINAL})
    scenario.push({"README.md": "changed\n"})
    return scenario


def git(bare: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(bare), *args], check=True, capture_output=True, text=True
    ).stdout


def pushes(fake: FakeGitHub) -> int:
    return len(fake.git.posts("git-receive-pack"))


def test_approve_an_object_opens_one_pull_request_with_the_exact_edit(pr: Commands) -> None:
    pr.comment("/approve web/settings mode=canary")
    run = pr.work_once()
    branch = "ichor/approve-web-settings"
    assert pr.replies() and "Opened" in pr.replies()[-1], (pr.replies(), run.log[-3000:])
    opened = [p for p in pr.fake.pulls(pr.full_name) if p["head"]["ref"] == branch]
    assert len(opened) == 1 and opened[0]["base"]["ref"] == "main"
    assert opened[0]["title"] == "ichor: approve ConfigMap web/settings"
    body = opened[0]["body"]
    assert "maria" in body and "data.state" in body and "pending" in body
    assert "**The gate on the result**: accepted" in body
    assert f"Opened {opened[0]['html_url']}" in pr.replies()[-1]
    # The pushed commit: one file changed, only its intended lines.
    main = git(pr.bare, "rev-parse", "main").strip()
    assert git(pr.bare, "rev-parse", f"{branch}^").strip() == main
    assert git(pr.bare, "diff", "--name-only", main, branch).split() == [SETTINGS]
    pushed = git(pr.bare, "show", f"{branch}:{SETTINGS}")
    assert (
        pushed
        == ORIGINAL.replace("mode: prod", "mode: canary").replace(
            "state: pending", "state: approved"
        )
        + "  decision: approved by maria\n"
    )
    message = git(pr.bare, "log", "-1", "--format=%an%n%B", branch)
    assert message.startswith("ichor-bot[bot]\nichor: approve ConfigMap web/settings")
    assert "Requested-by: maria" in message
    # The same request again: the same pull request, and no push.
    before = pushes(pr.fake)
    pr.comment("/approve web/settings mode=canary")
    pr.work_once()
    assert pushes(pr.fake) == before
    assert "already open" in pr.replies()[-1] and opened[0]["html_url"] in pr.replies()[-1]
    assert len([p for p in pr.fake.pulls(pr.full_name) if p["head"]["ref"] == branch]) == 1
    pr.assert_clean()


def test_ignore_on_a_same_repository_pull_request_goes_into_its_branch(pr: Commands) -> None:
    pr.push({"clusters/prod/notes.txt": "todo\n"})
    assert pr.verdict()[0] == "failure"  # a foreign file
    pr.comment("/ignore notes.txt in prod")
    run = pr.work_once()
    assert "Opened" in pr.replies()[-1], (pr.replies(), run.log[-2000:])
    opened = [p for p in pr.fake.pulls(pr.full_name) if p["head"]["ref"] == "ichor/ignore-prod-pr7"]
    assert len(opened) == 1 and opened[0]["base"]["ref"] == "feature"
    text = git(pr.bare, "show", "ichor/ignore-prod-pr7:clusters/prod/.gittargetignore")
    assert text.startswith("# .gittargetignore") and text.endswith("\n/notes.txt\n")
    # Its parent is the pull request's head: merging it fixes the pull request.
    assert git(pr.bare, "rev-parse", "ichor/ignore-prod-pr7^").strip() == pr.head
    pr.assert_clean()


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("/ignore * in prod", "would ignore every file"),
        ("/ignore v1/ in prod", "would shadow the managed file"),
        ("/delete ConfigMap web/settings", "several targets"),
    ],
)
def test_refused_changes_push_nothing(pr: Commands, body: str, why: str) -> None:
    before = pushes(pr.fake)
    pr.comment(body)
    pr.work_once()
    assert why in pr.replies()[-1]
    assert pushes(pr.fake) == before
    assert [p for p in pr.fake.pulls(pr.full_name) if p["head"]["ref"].startswith("ichor/")] == []


def test_an_unauthorized_commenter_gets_a_reply_and_no_pull_request(pr: Commands) -> None:
    pr.comment("/delete ConfigMap web/settings in prod", user=READER)
    pr.work_once()
    assert "needs `write` permission" in pr.replies()[-1]
    assert [p for p in pr.fake.pulls(pr.full_name) if p["head"]["ref"].startswith("ichor/")] == []


def test_delete_removes_the_file_when_nothing_else_is_left(pr: Commands) -> None:
    pr.comment("/delete ConfigMap web/settings in prod")
    pr.work_once()
    branch = "ichor/delete-web-settings"
    main = git(pr.bare, "rev-parse", "main").strip()
    assert git(pr.bare, "diff", "--name-status", main, branch).split() == ["D", SETTINGS]
    pr.assert_clean()


def test_two_workers_given_the_same_request_open_exactly_one_pull_request(
    pr: Commands, tmp_path: Path
) -> None:
    # Two deliveries of the same command (two comments) and two workers, each with a mirror
    # of its own, as on two hosts: only the Redis lock is shared.
    before = pushes(pr.fake)
    pr.comment("/approve web/settings")
    pr.comment("/approve web/settings")
    hosts = [tmp_path / f"host-{n}" for n in (1, 2)]
    for host in hosts:
        host.mkdir()
    workers = [pr.bot.start_worker(pr.fake.env(), host / "data") for host in hosts]
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and len(pr.replies()) < 2:
            time.sleep(0.2)
    finally:
        for worker in workers:
            worker.kill()
    replies = pr.replies()
    assert len(replies) == 2, [w.log for w in workers]
    branch = "ichor/approve-web-settings"
    opened = [p for p in pr.fake.pulls(pr.full_name) if p["head"]["ref"] == branch]
    assert len(opened) == 1
    assert all(opened[0]["html_url"] in r for r in replies), replies
    assert pushes(pr.fake) == before + 1  # the second found the change there, pushed nothing
    pr.assert_clean()
