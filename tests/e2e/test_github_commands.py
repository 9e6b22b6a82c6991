"""End to end on GitHub: ``issue_comment`` and ``check_run`` ``requested_action`` deliveries →
``ichor-bot serve`` → Redis → a real ``ichor-bot worker`` → the fake GitHub. Comment commands,
strict targets waiting for ``/approve``, and approvals that survive pushes and a lost Redis."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.e2e.harness import ROOT, Bot, WorkerRun, pull_request_payload, running_bot
from tests.fakeforge import FakeGitHub
from tests.fakeforge.fixtures import fake_github  # noqa: F401 - the fixture
from tests.support.gitops import configmap
from tests.support.gitrepo import WorkRepo
from tests.support.redis_server import RedisServer

COMMENT_FIXTURE = ROOT / "fixtures/webhooks/github/issue_comment__created-on-pr-go-scm.json"
BUTTON_FIXTURE = ROOT / "fixtures/webhooks/github/check_run__requested_action.json"
STRICT_CONFIG = """version: 1
targets:
  - {name: prod, path: clusters/prod, mode: strict}
  - {name: staging, path: clusters/staging}
commands:
  min_permission: write
"""
AUTHOR, MAINTAINER, READER = "octocat", "maria", "rita"
WEB = "clusters/prod/v1/configmaps/web/web.yaml"
API = "clusters/prod/v1/configmaps/web/api.yaml"


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


class Commands:
    """A strict repository with one pull request, and the comments people write on it."""

    def __init__(
        self,
        fake: FakeGitHub,
        bot: Bot,
        tmp_path: Path,
        number: int = 7,
        *,
        config: str = STRICT_CONFIG,
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

    def press(
        self, identifier: str, *, user: str = MAINTAINER, run: dict[str, Any] | None = None
    ) -> None:
        """``user`` presses a button of ``run`` (the newest check run when None)."""
        run = run or self.check_runs()[-1]
        payload: dict[str, Any] = copy.deepcopy(json.loads(BUTTON_FIXTURE.read_text()))
        owner, name = self.full_name.split("/")
        repo = payload["repository"]
        clone = self.fake.clone_url(self.full_name)
        repo.update(full_name=self.full_name, name=name, clone_url=clone)
        repo.update(html_url=clone.removesuffix(".git"))
        repo["owner"]["login"] = owner
        payload["check_run"].update(id=run["id"], head_sha=run["head_sha"])
        payload["check_run"]["pull_requests"][0]["number"] = self.number
        payload["requested_action"] = {"identifier": identifier}
        payload["sender"].update(login=user, type="User")
        payload["installation"] = {"id": 42}
        assert self.bot.post("check_run", payload) == 202

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


@pytest.fixture
def pr(fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> Commands:  # noqa: F811
    return Commands(fake_github, bot, tmp_path)


def strict_pull(pr: Commands) -> None:
    pr.push({WEB: configmap("web"), API: configmap("api")})
    assert pr.verdict() == ("action_required", "2 new objects in prod wait for /approve")
    actions = pr.check_runs()[-1].get("actions") or []
    assert [a["identifier"] for a in actions] == ["approve", "recheck"]


def test_help_replies_once_and_reacts(pr: Commands) -> None:
    pr.push({"README.md": "changed\n"})
    calls_before = len(pr.fake.calls)
    comment = pr.comment("/help")
    pr.work_once()
    assert len(pr.replies()) == 1
    assert "`prod` (strict), `staging` (relaxed)" in pr.replies()[0]
    assert [(r["comment_id"], r["content"]) for r in pr.fake.reactions()] == [
        (comment["id"], "eyes")
    ]
    new_calls = [c for c in pr.fake.calls_summary()[calls_before:] if "check-runs" in c]
    assert new_calls == []  # help changes no check
    pr.assert_clean()


def test_recheck_posts_a_new_result_and_the_button_too(pr: Commands) -> None:
    pr.push({"README.md": "changed\n"})
    assert len(pr.check_runs()) == 1
    pr.comment("/recheck")
    pr.work_once()
    runs = pr.check_runs()
    assert len(runs) == 2 and runs[-1]["conclusion"] == "success"
    assert pr.replies() == []  # nothing to read: the new result is the answer
    pr.press("recheck")
    pr.work_once()
    assert len(pr.check_runs()) == 3
    pr.assert_clean()


def test_strict_objects_wait_for_a_maintainer(pr: Commands) -> None:
    strict_pull(pr)
    pr.comment("/approve", user=AUTHOR)
    pr.work_once()
    assert len(pr.replies()) == 1 and "author of a pull request" in pr.replies()[0]
    assert pr.verdict()[0] == "action_required"
    pr.comment("/approve")
    pr.work_once()
    assert pr.verdict()[0] == "success"
    approval = pr.replies()[-1]
    assert "@maria approved 2 new objects" in approval and "<!-- ichor:approval v1 " in approval
    summary = pr.check_runs()[-1]["output"]["summary"]
    assert "approved by" in summary and "maria" in summary
    # A push that changes no approved object keeps the approval ...
    pr.push({"README.md": "again\n"})
    assert pr.verdict()[0] == "success"
    # ... one that changes an approved object needs a new one, for that object only.
    pr.push({API: configmap("api").replace("mode: prod", "mode: canary")})
    assert pr.verdict() == ("action_required", "1 new object in prod waits for /approve")
    pr.comment("/approve")
    pr.work_once()
    assert pr.verdict()[0] == "success"
    pr.comment("/approve cancel")
    pr.work_once()
    assert pr.verdict() == ("action_required", "2 new objects in prod wait for /approve")
    assert "withdrew their approval" in pr.replies()[-1]
    pr.assert_clean()


def test_the_approve_button_runs_the_same_checks(pr: Commands) -> None:
    strict_pull(pr)
    pr.press("approve", user=READER)
    pr.work_once()
    assert "needs `write` permission" in pr.replies()[-1]
    assert pr.verdict()[0] == "action_required"
    pr.press("approve")
    pr.work_once()
    assert pr.verdict()[0] == "success"
    pr.assert_clean()


def test_below_min_permission_gets_one_reply_and_nothing_changes(pr: Commands) -> None:
    strict_pull(pr)
    runs = len(pr.check_runs())
    pr.comment("/approve", user=READER)
    pr.work_once()
    assert len(pr.replies()) == 1
    assert "needs `write` permission on this repository, and @rita has `read`" in pr.replies()[0]
    assert len(pr.check_runs()) == runs
    pr.assert_clean()


@pytest.mark.parametrize("status", [503, 403])
def test_a_failed_permission_lookup_refuses(pr: Commands, status: int) -> None:
    strict_pull(pr)
    runs = len(pr.check_runs())
    pr.fake.inject_permission_failure(status, user=MAINTAINER, times=None)
    pr.comment("/approve")
    pr.work_once()
    assert len(pr.replies()) == 1
    assert "could not be checked" in pr.replies()[0]
    assert str(status) in pr.replies()[0]
    assert len(pr.check_runs()) == runs
    assert pr.verdict()[0] == "action_required"


def test_what_is_not_a_command_does_nothing(pr: Commands) -> None:
    strict_pull(pr)
    calls = len(pr.fake.calls)
    quoted = pr.comment("> /approve\n\nI agree with this")
    edited = pr.comment("/approve", post=False)
    pr.fake.edit_comment(edited["id"])
    pr.deliver_comment(edited, "/approve", user=MAINTAINER, action="edited")
    pr.comment("/approve", user=pr.fake.bot_login)
    pr.comment("please /approve this")
    pr.work_once()
    assert pr.replies() == ["/approve"]  # the one planted under the bot's own name
    assert pr.fake.reactions() == []
    assert [c for c in pr.fake.calls_summary()[calls:] if " /repos/" in c] == []
    assert quoted["id"]  # delivered, and nothing done
    assert pr.verdict()[0] == "action_required"
    pr.assert_clean()


def test_approvals_are_rebuilt_from_the_forge_after_redis_loses_them(
    fake_github: FakeGitHub,  # noqa: F811
    tmp_path: Path,
) -> None:
    (tmp_path / "bot").mkdir()
    with RedisServer(tmp_path / "redis") as own, running_bot(tmp_path / "bot", own.url) as bot:
        pr = Commands(fake_github, bot, tmp_path)
        strict_pull(pr)
        pr.comment("/approve")
        pr.work_once()
        assert pr.verdict()[0] == "success"
        connection = redis.Redis.from_url(own.url)
        connection.flushall()
        pr.push({"README.md": "after the flush\n"})
        assert pr.verdict()[0] == "success"
        # Read back from the bot's reply on the forge, and kept in Redis again.
        assert connection.exists(f"ichor:approvals:github:{pr.full_name}:{pr.number}")
        pr.assert_clean()
