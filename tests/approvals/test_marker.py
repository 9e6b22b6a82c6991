"""Approval markers: written into the bot's replies, read back only from its own unedited
comments, replayed oldest first; anything malformed is skipped."""

from __future__ import annotations

import base64
import json

import pytest

from bot.approvals.approval import Approval, Fingerprint
from bot.approvals.codec import approval_to_dict
from bot.approvals.marker import (
    MAX_FINGERPRINTS,
    MAX_MARKERS_PER_COMMENT,
    approval_marker,
    approvals_from_comments,
    cancel_marker,
    read_approval,
)
from bot.forges.base import ForgeComment

BOT = "ichor-bot[bot]"
WEB = Fingerprint("Deployment.apps prod/web", "a" * 64)
API = Fingerprint("ConfigMap prod/api", "b" * 64)


def approval(approver: str = "bob", *prints: Fingerprint, source: str = "101") -> Approval:
    return Approval(approver, "c" * 40, frozenset(prints or (WEB,)), source)


_ids = iter(range(1, 1_000_000))


def reply(*markers: str, author: str = BOT, edited: bool = False) -> ForgeComment:
    n = next(_ids)
    body = "Approved 1 new object.\n\n" + "\n".join(markers)
    return ForgeComment(str(n), author, body, author_is_bot=True, edited=edited, url=f"u/{n}")


def payload(data: object) -> str:
    raw = json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_a_marker_is_a_hidden_comment_line_that_round_trips() -> None:
    given = approval("bob", WEB, API)
    marker = approval_marker(given)
    assert marker.startswith("<!-- ichor:approval v1 ") and marker.endswith(" -->")
    assert "\n" not in marker and "=" not in marker
    comment = reply(marker)
    (found,) = approvals_from_comments([comment], BOT)
    assert found.approver == "bob" and found.head_sha == given.head_sha
    assert found.fingerprints == {WEB, API} and found.source == "101"
    assert found.reply == comment.url  # the comment it was found in


def test_a_reply_url_already_in_the_marker_is_kept() -> None:
    given = Approval("bob", "c" * 40, frozenset({WEB}), "101", reply="https://forge/c/9")
    (found,) = approvals_from_comments([reply(approval_marker(given))], BOT)
    assert found == given


def test_cancel_marker_shape() -> None:
    marker = cancel_marker("bob", "202")
    assert marker.startswith("<!-- ichor:approval-cancel v1 ") and marker.endswith(" -->")


def test_only_the_bots_own_unedited_comments_count() -> None:
    marker = approval_marker(approval("mallory"))
    comments = [
        reply(marker, author="mallory"),  # anyone can paste a marker
        reply(marker, edited=True),  # an edit is not the bot's
        reply(marker, author="ichor-bot"),  # another account's login
    ]
    assert approvals_from_comments(comments, BOT) == ()
    assert len(approvals_from_comments([reply(marker, author="Ichor-Bot[bot]")], BOT)) == 1


def test_replay_is_oldest_first_and_a_cancel_removes_that_approvers_approval() -> None:
    bob1, carol, bob2 = approval("bob", WEB), approval("carol", API), approval("bob", API)
    comments = [
        reply(approval_marker(bob1)),
        reply(approval_marker(carol)),
        reply(approval_marker(bob2)),  # replaces bob's first, and comes last
    ]
    assert [(a.approver, a.fingerprints) for a in approvals_from_comments(comments, BOT)] == [
        ("carol", frozenset({API})),
        ("bob", frozenset({API})),
    ]
    cancelled = [*comments, reply(cancel_marker("bob", "303"))]
    assert [a.approver for a in approvals_from_comments(cancelled, BOT)] == ["carol"]
    # A cancel before an approval does not remove the later one.
    again = [reply(cancel_marker("bob", "1")), reply(approval_marker(bob1))]
    assert [a.approver for a in approvals_from_comments(again, BOT)] == ["bob"]
    # Several markers in one comment run in order.
    both = [reply(approval_marker(bob1), cancel_marker("bob", "2"), approval_marker(carol))]
    assert [a.approver for a in approvals_from_comments(both, BOT)] == ["carol"]


GOOD = approval_to_dict(approval("bob"))


@pytest.mark.parametrize(
    "bad",
    [
        "not base64 at all!",
        "@@@",
        payload([1, 2]),
        payload({**GOOD, "extra": 1}),
        payload({k: v for k, v in GOOD.items() if k != "source"}),
        payload({**GOOD, "approver": ""}),
        payload({**GOOD, "approver": 7}),
        payload({**GOOD, "head_sha": "not-a-sha"}),
        payload({**GOOD, "fingerprints": [["x", "short"]]}),
        payload({**GOOD, "fingerprints": [["x", "A" * 64]]}),
        payload({**GOOD, "fingerprints": [[1, "a" * 64]]}),
        payload({**GOOD, "fingerprints": [["x", "a" * 64, "extra"]]}),
        payload({**GOOD, "fingerprints": "x"}),
        payload({**GOOD, "fingerprints": [["x", "a" * 64]] * (MAX_FINGERPRINTS + 1)}),
        payload({**GOOD, "reply": 5}),
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),
    ],
)
def test_a_malformed_marker_is_skipped(bad: str) -> None:
    assert read_approval(bad) is None
    comments = [reply(f"<!-- ichor:approval v1 {bad} -->"), reply(approval_marker(approval()))]
    assert [a.approver for a in approvals_from_comments(comments, BOT)] == ["bob"]


@pytest.mark.parametrize(
    "bad",
    [payload({"approver": "bob"}), payload({"approver": "", "source": "1"}), payload([1]), "!!"],
)
def test_a_malformed_cancel_is_skipped(bad: str) -> None:
    comments = [
        reply(approval_marker(approval())),
        reply(f"<!-- ichor:approval-cancel v1 {bad} -->"),
    ]
    assert [a.approver for a in approvals_from_comments(comments, BOT)] == ["bob"]


def test_the_input_read_is_bounded() -> None:
    many = [approval_marker(approval(f"user{n}")) for n in range(MAX_MARKERS_PER_COMMENT + 5)]
    found = approvals_from_comments([reply(*many)], BOT)
    assert len(found) == MAX_MARKERS_PER_COMMENT
    huge = "x" * 1_000_001 + approval_marker(approval())
    assert approvals_from_comments([reply(huge)], BOT) == ()
