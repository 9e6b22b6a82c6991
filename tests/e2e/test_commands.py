"""Comment commands end to end on every forge (design.md 5, 5.1): a comment's webhook →
``ichor-bot serve`` → Redis → a real ``ichor-bot worker`` → the fake forge, which serves the
comments, reactions and permission look-ups the commands need.

The repository has a ``strict`` target (prod) and a relaxed one (staging), and
``commands.min_permission: write``; ``alice`` opens the pull request, ``maria`` maintains the
repository and ``rita`` may only read (:mod:`tests.e2e.drivers`). Each test asserts the exact
API calls of the job as the forge's driver spells them (``forge.api``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import redis

from tests.e2e.drivers import AUTHOR, FORGES, MAINTAINER, READER, Forge, open_forge
from tests.e2e.harness import running_bot
from tests.support.gitops import configmap
from tests.support.redis_server import RedisServer

STRICT = """version: 1
targets:
  - {name: prod, path: clusters/prod, mode: strict}
  - {name: staging, path: clusters/staging}
commands:
  min_permission: write
"""
A = "clusters/prod/v1/configmaps/web/a.yaml"
B = "clusters/prod/v1/configmaps/web/b.yaml"
TWO_NEW = {A: configmap("a"), B: configmap("b")}
STAGING = {"clusters/staging/v1/configmaps/web/x.yaml": configmap("x")}
WAIT_2 = "2 new objects in prod wait for /approve"
WAIT_1 = "1 new object in prod waits for /approve"
# The summary names an approver without mentioning them (a zero-width space after the @).
APPROVED_BY = f"approved by @&#8203;{MAINTAINER}"
APPROVAL_MARKER = "<!-- ichor:approval v1 "
CANCEL_MARKER = "<!-- ichor:approval-cancel v1 "
NOT_THE_AUTHOR = (
    "`/approve` was not run: the author of a pull request cannot approve its own new "
    "objects (`commands.allow_author_approval` is off); ask another maintainer."
)
NOT_A_WRITER = (
    f"`/approve` was not run: it needs `write` permission on this repository, and @{READER} "
    "has `read`."
)
UNCHECKED = (
    f"`/approve` was not run: the permission of @{MAINTAINER} on this repository could not "
    "be checked, and a lookup that fails never counts as permission."
)


def approved(forge: Forge) -> str:
    """A pull request adding two objects to prod, checked, then approved by the maintainer
    after reading that check, in a worker run whose first job checks the head again (the
    command job is not the worker's first: its re-check must still run as a job of its own);
    its head."""
    head = forge.open(TWO_NEW, STRICT)
    forge.pull_request(head)
    forge.comment("/ichor approve")  # the prefixed form (GitLab runs its own /approve)
    forge.work()
    assert forge.states(head) == forge.checked(forge.WAITING, forge.WAITING, forge.PASSED)
    return head


def test_help_replies_once_with_the_targets_and_reacts(forge: Forge) -> None:
    forge.open(STAGING, STRICT)
    comment = forge.command("/help", user=READER)
    assert forge.calls() == [*forge.api.command(comment), *forge.api.reply()]  # no check
    (reply,) = forge.replies()
    assert "**Targets**: `prod` (strict), `staging` (relaxed)." in reply
    assert "| `/approve` | `write`, not the PR author |" in reply
    assert forge.reactions(comment) == ["eyes"]


def test_recheck_posts_a_new_result_for_the_head(forge: Forge) -> None:
    head = forge.open(STAGING, STRICT)
    assert forge.states(head) == forge.checked(forge.PASSED)
    summaries = forge.summary_comments()
    comment = forge.command("/recheck", user=READER)
    assert forge.calls() == [
        *forge.api.command(comment),
        *forge.api.permission(READER),
        *forge.api.check(head, summary="unchanged"),
    ]
    assert forge.states(head) == forge.checked(forge.PASSED, forge.PASSED)
    assert forge.summary_comments() == summaries  # the same, not edited
    assert forge.replies() == []  # nothing to read: the new result is the answer
    assert forge.reactions(comment) == ["eyes"]


def test_strict_objects_wait_for_a_maintainers_approve(forge: Forge) -> None:
    head = forge.open(TWO_NEW, STRICT)
    assert forge.verdict() == (forge.WAITING, WAIT_2)
    assert forge.states(head) == forge.checked(forge.WAITING)
    assert forge.buttons() == forge.BUTTONS
    assert forge.summary().count("waiting for `/approve`") == 2
    waiting = forge.summary_comments()

    mine = forge.command("/approve", user=AUTHOR)
    api = forge.api
    assert forge.calls() == [*api.command(mine), *api.permission(AUTHOR), *api.reply()]
    assert forge.replies() == [NOT_THE_AUTHOR]
    assert forge.states(head) == forge.checked(forge.WAITING)
    assert forge.summary_comments() == waiting
    assert forge.replied_approvals() == () and forge.stored_approvals() == ()

    theirs = forge.command("/approve")
    assert forge.calls() == [
        *api.command(theirs),
        *api.permission(MAINTAINER),
        *api.reply(),
        *api.check(head),
    ]
    assert forge.verdict() == (forge.PASSED, "1 touched target accepted")
    assert forge.states(head) == forge.checked(forge.WAITING, forge.PASSED)
    _, reply = forge.replies()
    assert reply.startswith(f"@{MAINTAINER} approved 2 new objects of strict targets")
    assert APPROVAL_MARKER in reply
    (approval,) = forge.replied_approvals()
    assert (approval.approver, approval.head_sha, approval.source) == (
        MAINTAINER,
        head,
        str(theirs["id"]),
    )
    assert sorted(f.identity for f in approval.fingerprints) == [
        "ConfigMap web/a",
        "ConfigMap web/b",
    ]
    assert forge.stored_approvals() == (replace(approval, reply=None),)  # as the marker says
    assert forge.summary().count(f"{APPROVED_BY} at <code>{head[:7]}</code>") == 2
    assert forge.reactions(theirs) == ["eyes"]


def test_a_push_keeps_the_approval_of_what_it_leaves_unchanged(forge: Forge) -> None:
    approved(forge)
    forge.reset_calls()
    readme = forge.push({"README.md": "changed\n"})
    assert forge.states(readme) == forge.checked(forge.PASSED)
    # The approvals come from Redis: the forge is asked for nothing but the check's own calls
    # (no reply, no new summary).
    assert forge.calls() == forge.api.check(readme, new_worker=True)
    assert forge.summary().count(APPROVED_BY) == 2

    forge.reset_calls()
    changed = forge.push({A: configmap("a").replace("mode: prod", "mode: dev")})
    assert forge.states(changed) == forge.checked(forge.WAITING)
    assert forge.calls() == forge.api.check(changed, new_worker=True)
    assert forge.verdict() == (forge.WAITING, WAIT_1)
    summary = forge.summary()
    assert summary.count(APPROVED_BY) == 1  # b, still as approved
    assert summary.count("waiting for `/approve`") == 1  # a, changed
    assert len(forge.replies()) == 1  # no new /approve was asked of anyone
    # A new /approve covers the changed object.
    forge.command("/approve")
    assert forge.verdict()[0] == forge.PASSED


def test_approve_cancel_makes_the_objects_wait_again(forge: Forge) -> None:
    head = approved(forge)
    comment = forge.command("/approve cancel")
    api = forge.api
    # maria's permission: cached since her /approve.
    assert forge.calls() == [*api.command(comment), *api.reply(), *api.check(head)]
    waiting = forge.WAITING
    assert forge.states(head) == forge.checked(waiting, waiting, forge.PASSED, waiting)
    assert forge.verdict() == (waiting, WAIT_2)
    _, cancel = forge.replies()
    assert f"@{MAINTAINER} withdrew their approval" in cancel
    assert CANCEL_MARKER in cancel
    assert forge.replied_approvals() == ()  # read back, the cancel removes the approval
    assert forge.stored_approvals() == ()
    assert forge.reactions(comment) == ["eyes"]


def test_a_reader_is_refused_once_and_nothing_changes(forge: Forge) -> None:
    head = forge.open(TWO_NEW, STRICT)
    summaries = forge.summary_comments()
    comment = forge.command("/approve", user=READER)
    api = forge.api
    assert forge.calls() == [*api.command(comment), *api.permission(READER), *api.reply()]
    assert forge.replies() == [NOT_A_WRITER]
    assert forge.states(head) == forge.checked(forge.WAITING)
    assert forge.verdict() == (forge.WAITING, WAIT_2)
    assert forge.summary_comments() == summaries
    assert forge.replied_approvals() == () and forge.stored_approvals() == ()


@pytest.mark.parametrize("status", [503, 403])
def test_a_failed_permission_lookup_refuses_and_says_so(forge: Forge, status: int) -> None:
    head = forge.open(TWO_NEW, STRICT)
    summaries = forge.summary_comments()
    forge.fail_permission_lookups(status, MAINTAINER)
    comment = forge.command("/approve")
    attempts = 5 if status == 503 else 1  # a 5xx is tried again, a 403 is an answer
    assert forge.calls() == [
        *forge.api.command(comment),
        *forge.api.permission(MAINTAINER, status, attempts),
        *forge.api.reply(),
    ]
    (reply,) = forge.replies()
    assert reply.startswith(UNCHECKED) and str(status) in reply
    if forge.route == "gitea" and status == 403:  # Gitea answers 403 to a token not admin
        assert "give the bot account admin access to the repository" in reply
    assert forge.states(head) == forge.checked(forge.WAITING)
    assert forge.verdict() == (forge.WAITING, WAIT_2)
    assert forge.summary_comments() == summaries
    assert forge.replied_approvals() == () and forge.stored_approvals() == ()
    assert MAINTAINER.encode() not in forge.bot.redis.hkeys(forge.approvals_key())


def test_edits_quotes_and_the_bots_own_comments_run_nothing(forge: Forge) -> None:
    head = forge.open(TWO_NEW, STRICT)
    forge.reset_calls()
    edited = forge.comment("looks good", deliver=False)
    edited = forge.edit_comment(edited, "/approve")
    assert forge.deliver_comment(edited, action="edited") == 200  # not even queued
    quoted = forge.comment("> /approve\n\nthat is what I would say")
    within = forge.comment("please /approve this")
    forge.work()
    assert forge.calls() == []
    assert forge.reactions(edited) == forge.reactions(quoted) == forge.reactions(within) == []

    own = forge.comment("/approve", user=forge.bot_name)
    forge.work()
    assert forge.calls() == forge.api.own_comment()
    assert forge.reactions(own) == []
    assert forge.replies() == ["/approve"]  # the one written under the bot's own name
    assert forge.states(head) == forge.checked(forge.WAITING)


@pytest.mark.parametrize("kind", FORGES)
def test_approvals_lost_from_redis_are_rebuilt_from_the_reply(kind: str, tmp_path: Path) -> None:
    (tmp_path / "own-bot").mkdir()
    with (
        RedisServer(tmp_path / "redis", persistent=False) as server,
        running_bot(tmp_path / "own-bot", server.url) as own,
        open_forge(kind, own, tmp_path) as forge,
    ):
        head = approved(forge)
        client = redis.Redis.from_url(server.url)
        try:
            assert list(client.scan_iter("ichor:approvals:*"))
            client.flushall()
            forge.reset_calls()
            readme = forge.push({"README.md": "changed\n"})
            assert forge.states(readme) == forge.checked(forge.PASSED)
            # The store had nothing: the approval came back from the bot's reply.
            assert forge.calls() == forge.api.check(readme, new_worker=True, rebuilt=True)
            assert client.hexists(forge.approvals_key(), MAINTAINER)  # and is kept again
        finally:
            client.close()
        assert forge.summary().count(APPROVED_BY) == 2
        (restored,) = forge.stored_approvals() or ()
        assert (restored.approver, restored.head_sha) == (MAINTAINER, head)
        urls = zip(forge.reply_urls(), forge.replies(), strict=True)
        assert [restored.reply] == [url for url, body in urls if APPROVAL_MARKER in body]
