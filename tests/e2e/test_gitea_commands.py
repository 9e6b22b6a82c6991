"""End to end on Gitea and Forgejo: comment commands (design.md 5, 5.1). A signed ``issue_comment``
webhook (Gitea or Forgejo headers) → ``ichor-bot serve`` → Redis → a real ``ichor-bot worker``
→ the fake Gitea (every request validated against the flavor's recorded Swagger description).

The repository has a strict target (``prod``) and a relaxed one (``staging``), and
``commands.min_permission: write``. Its pull requests are opened by ``alice`` (who may write);
``maria`` maintains it (write) and ``rita`` may only read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.approvals.approval import Approval
from bot.approvals.marker import approvals_from_comments
from bot.forges.base import ForgeComment
from tests.e2e.gitea_scenario import GiteaScenario
from tests.e2e.harness import Bot, WorkerRun, running_bot
from tests.fakeforge.gitea import FakeGitea
from tests.support.gitops import configmap
from tests.support.redis_server import RedisServer

STRICT_CONFIG = """version: 1
targets:
  - {name: prod, path: clusters/prod, mode: strict}
  - {name: staging, path: clusters/staging, mode: relaxed}
commands:
  min_permission: write
"""
AUTHOR, MAINTAINER, READER = "alice", "maria", "rita"
A = "clusters/prod/v1/configmaps/web/a.yaml"
B = "clusters/prod/v1/configmaps/web/b.yaml"
TWO_NEW = {A: configmap("a"), B: configmap("b")}
WAIT_2 = "2 new objects in prod wait for /approve"
# The summary names an approver without mentioning them (a zero-width space after the @).
APPROVED_BY = "approved by @&#8203;" + MAINTAINER
APPROVAL_MARKER = "<!-- ichor:approval v1 "
CANCEL_MARKER = "<!-- ichor:approval-cancel v1 "


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


@pytest.fixture(params=["gitea", "forgejo"])
def fake(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FakeGitea]:
    with FakeGitea(tmp_path / "forge-git", flavor=request.param) as running:
        yield running


class Commands(GiteaScenario):
    """A repository with a strict target, its people, and what the bot said on it."""

    def __init__(self, fake: FakeGitea, bot: Bot, tmp_path: Path) -> None:
        super().__init__(fake, bot, tmp_path)
        self.base_sha = ""  # the base commit, once a pull request is open
        for user, permission in ((AUTHOR, "write"), (MAINTAINER, "write"), (READER, "read")):
            fake.set_permission(self.full_name, user, permission)

    def api(self, suffix: str) -> str:
        return f"/api/v1/repos/{self.full_name}{suffix}"

    def open_pull(self, number: int, files: Mapping[str, str | None], *, check: bool = True) -> str:
        """A pull request of ``files`` on a feature branch (the base branch stays at the base
        commit, whose configuration the commands read); checked once unless ``check`` is off."""
        base = self.base({".ichor.yaml": STRICT_CONFIG})
        self.work.checkout("feature", create_from=base)
        self.base_sha = base
        head = self.work.commit(files)
        payload = self.pull(number, head, base)
        if check:
            self.deliver(payload)
            self.work_once()
        return head

    def push(self, number: int, files: Mapping[str, str | None]) -> str:
        head = self.work.commit(files)
        self.deliver(self.pull(number, head, self.base_sha))
        return head

    def last_status(self, sha: str) -> dict[str, Any]:
        return self.fake.statuses(self.full_name, sha)[-1]

    def replies(self, number: int) -> list[dict[str, Any]]:
        """The bot's comments on the pull request other than its summary."""
        return [
            c
            for c in self.fake.comments(self.full_name, number)
            if c["user"]["login"] == self.fake.bot_login and "ichor:summary" not in c["body"]
        ]

    def approvals(self, number: int) -> tuple[Approval, ...]:
        """The approvals the bot's replies record, read back as a rebuild would read them."""
        listed = [
            ForgeComment(str(c["id"]), c["user"]["login"], c["body"], url=c["html_url"])
            for c in self.fake.comments(self.full_name, number)
        ]
        return approvals_from_comments(listed, self.fake.bot_login)

    def check_calls(
        self, number: int, head: str, *, new_worker: bool = False, rebuilt: bool = False
    ) -> list[str]:
        """A check that edits the summary: pending, the summary found and edited, the verdict.
        ``new_worker``: the bot's login is asked first (once per worker); ``rebuilt``: the
        approvals are read back from the comments before the summary is looked for."""
        comments = f"GET {self.api(f'/issues/{number}/comments')} 200"
        (summary,) = self.summary(number)
        return [
            f"POST {self.api(f'/statuses/{head}')} 201",
            *(["GET /api/v1/user 200"] if new_worker else []),
            *([comments] if rebuilt else []),
            comments,
            f"PATCH {self.api('/issues/comments/' + str(summary['id']))} 200",
            f"POST {self.api(f'/statuses/{head}')} 201",
        ]

    def eyes(self, comment: dict[str, Any]) -> list[dict[str, Any]]:
        return self.fake.reactions(self.full_name, comment["id"])

    def command(self, number: int, body: str, *, user: str) -> tuple[dict[str, Any], WorkerRun]:
        """``user`` comments ``body``; one worker run, with the forge calls of it alone."""
        self.fake.reset_calls()
        comment = self.comment(number, body, user=user)
        return comment, self.work_once()

    def approved(self, number: int) -> str:
        """A pull request adding two objects to prod, checked, then approved by the maintainer
        after reading that check, in a worker run whose first job checks the head again (the
        command job is not the worker's first: its re-check must still run as a job of its
        own); its head."""
        head = self.open_pull(number, TWO_NEW)
        self.deliver(self.pull(number, head, self.base_sha))
        self.comment(number, "/approve", user=MAINTAINER)
        self.work_once()
        assert self.states(head) == [*(["pending", "failure"] * 2), "pending", "success"]
        return head

    def done(self) -> None:
        """No request the forge would refuse, and the token in no worker's log."""
        self.fake.assert_clean()
        assert self.runs
        assert all(self.fake.token not in run.log for run in self.runs)


@pytest.fixture
def commands(fake: FakeGitea, bot: Bot, tmp_path: Path) -> Commands:
    return Commands(fake, bot, tmp_path)


def reply_calls(c: Commands, number: int, comment: dict[str, Any]) -> list[str]:
    """What every command job asks first: who the bot is and the pull request, then the eyes
    reaction on ``comment``."""
    reaction = c.api(f"/issues/comments/{comment['id']}/reactions")
    return [
        "GET /api/v1/user 200",
        f"GET {c.api(f'/pulls/{number}')} 200",
        f"POST {reaction} 201",
    ]


def test_help_replies_once_and_reacts_with_eyes(commands: Commands) -> None:
    commands.open_pull(
        21, {"clusters/staging/v1/configmaps/web/x.yaml": configmap("x")}, check=False
    )
    comment, _ = commands.command(21, "/help", user=READER)
    assert commands.fake.calls_summary() == [
        *reply_calls(commands, 21, comment),
        f"POST {commands.api('/issues/21/comments')} 201",
    ]
    (reply,) = commands.replies(21)
    assert "**Targets**: `prod` (strict), `staging` (relaxed)." in reply["body"]
    assert "| `/approve` | `write`, not the PR author |" in reply["body"]
    assert commands.eyes(comment) == [{"content": "eyes", "user": commands.fake.bot_login}]
    commands.done()


def test_recheck_posts_a_new_result_for_the_head(commands: Commands) -> None:
    head = commands.open_pull(22, {"clusters/staging/v1/configmaps/web/x.yaml": configmap("x")})
    assert commands.states(head) == ["pending", "success"]
    comment, _ = commands.command(22, "/recheck", user=READER)
    assert commands.fake.calls_summary() == [
        *reply_calls(commands, 22, comment),
        f"GET {commands.api(f'/collaborators/{READER}/permission')} 200",
        f"POST {commands.api(f'/statuses/{head}')} 201",
        f"GET {commands.api('/issues/22/comments')} 200",
        f"POST {commands.api(f'/statuses/{head}')} 201",
    ]
    assert commands.states(head) == ["pending", "success", "pending", "success"]
    assert commands.replies(22) == []  # nothing to read: the new result says it
    assert len(commands.summary(22)) == 1
    assert [r["content"] for r in commands.eyes(comment)] == ["eyes"]
    commands.done()


def test_strict_objects_wait_for_a_maintainers_approve(commands: Commands) -> None:
    head = commands.open_pull(23, TWO_NEW)
    assert commands.states(head) == ["pending", "failure"]
    assert commands.last_status(head)["description"] == WAIT_2
    (waiting,) = commands.summary(23)

    comment, _ = commands.command(23, "/approve", user=AUTHOR)
    assert commands.fake.calls_summary() == [
        *reply_calls(commands, 23, comment),
        f"GET {commands.api(f'/collaborators/{AUTHOR}/permission')} 200",
        f"POST {commands.api('/issues/23/comments')} 201",
    ]
    (refusal,) = commands.replies(23)
    assert refusal["body"] == (
        "`/approve` was not run: the author of a pull request cannot approve its own new "
        "objects (`commands.allow_author_approval` is off); ask another maintainer."
    )
    assert commands.states(head) == ["pending", "failure"]
    assert commands.summary(23) == [waiting]
    assert commands.approvals(23) == ()

    comment, _ = commands.command(23, "/approve", user=MAINTAINER)
    assert commands.fake.calls_summary() == [
        *reply_calls(commands, 23, comment),
        f"GET {commands.api(f'/collaborators/{MAINTAINER}/permission')} 200",
        f"POST {commands.api('/issues/23/comments')} 201",
        *commands.check_calls(23, head),
    ]
    assert commands.states(head) == ["pending", "failure", "pending", "success"]
    assert commands.last_status(head)["description"] == "1 touched target accepted"
    _, reply = commands.replies(23)
    assert f"@{MAINTAINER} approved 2 new objects" in reply["body"]
    assert APPROVAL_MARKER in reply["body"]
    (approval,) = commands.approvals(23)
    assert (approval.approver, approval.head_sha, approval.source) == (
        MAINTAINER,
        head,
        str(comment["id"]),
    )
    assert sorted(f.identity for f in approval.fingerprints) == [
        "ConfigMap web/a",
        "ConfigMap web/b",
    ]
    (summary,) = commands.summary(23)
    assert summary["body"].count(f"{APPROVED_BY} at <code>{head[:7]}</code>") == 2
    commands.done()


def test_a_push_keeps_the_approval_of_what_it_leaves_unchanged(commands: Commands) -> None:
    commands.approved(24)
    commands.fake.reset_calls()
    readme = commands.push(24, {"README.md": "changed\n"})
    commands.work_once()
    assert commands.states(readme) == ["pending", "success"]
    # The approvals come from Redis; the forge is asked for nothing but the check's own calls.
    assert commands.fake.calls_summary() == commands.check_calls(24, readme, new_worker=True)

    commands.fake.reset_calls()
    changed = commands.push(24, {A: configmap("a").replace("mode: prod", "mode: dev")})
    commands.work_once()
    assert commands.states(changed) == ["pending", "failure"]
    assert commands.fake.calls_summary() == commands.check_calls(24, changed, new_worker=True)
    assert commands.last_status(changed)["description"] == "1 new object in prod waits for /approve"
    (summary,) = commands.summary(24)
    assert summary["body"].count(APPROVED_BY) == 1  # b, still as approved
    assert len(commands.replies(24)) == 1  # no new /approve was asked of anyone
    commands.done()


def test_approve_cancel_makes_the_objects_wait_again(commands: Commands) -> None:
    head = commands.approved(25)
    comment, _ = commands.command(25, "/approve cancel", user=MAINTAINER)
    assert commands.fake.calls_summary() == [
        *reply_calls(commands, 25, comment),  # maria's permission: cached since her /approve
        f"POST {commands.api('/issues/25/comments')} 201",
        *commands.check_calls(25, head),
    ]
    assert commands.states(head) == [
        *(["pending", "failure"] * 2),
        "pending",
        "success",
        "pending",
        "failure",
    ]
    assert commands.last_status(head)["description"] == WAIT_2
    _, cancel = commands.replies(25)
    assert f"@{MAINTAINER} withdrew their approval" in cancel["body"]
    assert CANCEL_MARKER in cancel["body"]
    assert commands.approvals(25) == ()  # read back, the cancel removes the approval
    assert [r["content"] for r in commands.eyes(comment)] == ["eyes"]
    commands.done()


def test_a_reader_is_refused_and_nothing_changes(commands: Commands) -> None:
    head = commands.open_pull(26, TWO_NEW)
    summary = commands.summary(26)
    comment, _ = commands.command(26, "/approve", user=READER)
    assert commands.fake.calls_summary() == [
        *reply_calls(commands, 26, comment),
        f"GET {commands.api(f'/collaborators/{READER}/permission')} 200",
        f"POST {commands.api('/issues/26/comments')} 201",
    ]
    (reply,) = commands.replies(26)
    assert reply["body"] == (
        f"`/approve` was not run: it needs `write` permission on this repository, and @{READER} "
        "has `read`."
    )
    assert commands.states(head) == ["pending", "failure"]
    assert commands.summary(26) == summary
    assert commands.approvals(26) == ()
    commands.done()


@pytest.mark.parametrize("failure", ["5xx", "403"])
def test_a_failed_permission_lookup_refuses_and_says_so(commands: Commands, failure: str) -> None:
    head = commands.open_pull(27, TWO_NEW)
    summary = commands.summary(27)
    permission = commands.api(f"/collaborators/{MAINTAINER}/permission")
    if failure == "5xx":
        # Down on every attempt; Retry-After 0 keeps the adapter's retries fast.
        commands.fake.inject(
            "GET", permission, status=503, headers={"retry-after": "0"}, times=None
        )
    else:
        commands.fake.forbid_permission_reads(commands.full_name)  # the token is no repo admin
    comment, _ = commands.command(27, "/approve", user=MAINTAINER)
    lookups = [f"GET {permission} {'503' if failure == '5xx' else '403'}"]
    assert commands.fake.calls_summary() == [
        *reply_calls(commands, 27, comment),
        *lookups * (5 if failure == "5xx" else 1),
        f"POST {commands.api('/issues/27/comments')} 201",
    ]
    (reply,) = commands.replies(27)
    assert reply["body"].startswith(
        f"`/approve` was not run: the permission of @{MAINTAINER} on this repository could not "
        "be checked, and a lookup that fails never counts as permission."
    )
    if failure == "403":
        assert "give the bot account admin access to the repository" in reply["body"]
    assert commands.states(head) == ["pending", "failure"]
    assert commands.summary(27) == summary
    assert commands.approvals(27) == ()
    assert MAINTAINER.encode() not in commands.bot.redis.hkeys(
        f"ichor:approvals:gitea:{commands.full_name}:27"
    )
    commands.done()


def test_edits_quotes_and_the_bots_own_comments_run_nothing(commands: Commands) -> None:
    commands.open_pull(28, TWO_NEW)
    commands.fake.reset_calls()
    edited = commands.fake.add_comment(commands.full_name, 28, "looks good", user=MAINTAINER)
    edited = commands.fake.edit_comment(edited["id"], "/approve")
    assert commands.deliver_comment(edited, action="edited") == 200  # not even queued
    quoted = commands.comment(28, "> /approve\n\nthat is what I would say", user=MAINTAINER)
    commands.work_once()
    assert commands.fake.calls_summary() == []
    assert commands.eyes(edited) == commands.eyes(quoted) == []

    own = commands.comment(28, "/approve", user=commands.fake.bot_login)
    commands.work_once()
    assert commands.fake.calls_summary() == ["GET /api/v1/user 200"]  # who the bot is, only
    assert commands.eyes(own) == []
    assert commands.replies(28) == [own]
    commands.done()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis", persistent=False) as server:
        yield server


def test_approvals_lost_from_redis_are_rebuilt_from_the_reply(
    fake: FakeGitea, own_redis: RedisServer, tmp_path: Path
) -> None:
    (tmp_path / "own-bot").mkdir()
    with running_bot(tmp_path / "own-bot", own_redis.url) as own_bot:
        commands = Commands(fake, own_bot, tmp_path)
        commands.approved(29)
        client = redis.Redis.from_url(own_redis.url)
        try:
            client.flushall()
            commands.fake.reset_calls()
            readme = commands.push(29, {"README.md": "changed\n"})
            commands.work_once()
            assert commands.states(readme) == ["pending", "success"]
            assert commands.fake.calls_summary() == commands.check_calls(
                29, readme, new_worker=True, rebuilt=True
            )
            assert client.hexists(f"ichor:approvals:gitea:{commands.full_name}:29", MAINTAINER)
        finally:
            client.close()
        (summary,) = commands.summary(29)
        assert summary["body"].count(APPROVED_BY) == 2
        commands.done()
