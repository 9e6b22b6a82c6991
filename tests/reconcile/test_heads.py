"""The reconciler's decisions, pure: when a head needs a check, when the forge must be asked,
and the event a check is queued as."""

from __future__ import annotations

import pytest

from bot.forges.base import HeadCheck, PullRequestRef
from bot.reconcile.events import change_request, delivery_id
from bot.reconcile.heads import HeadFacts, Verdict, forge_asked, judge
from bot.repos import ForgeKind, RepoRef
from bot.webhooks import event_from_dict, event_to_dict

NOW, GRACE = 10_000.0, 900.0
SHA = "a" * 40


@pytest.mark.parametrize(
    ("facts", "verdict"),
    [
        (HeadFacts(checked=True), Verdict.DONE),
        (HeadFacts(False, HeadCheck.FINAL), Verdict.DONE),
        # Nobody has it: its delivery was lost.
        (HeadFacts(False, HeadCheck.NONE), Verdict.QUEUE),
        # A job has it (queued, or running on the forge): left to it within the grace...
        (HeadFacts(False, HeadCheck.NONE, received=True), Verdict.WAIT),
        (HeadFacts(False, HeadCheck.RUNNING), Verdict.WAIT),
        (HeadFacts(False, HeadCheck.RUNNING, waiting_since=NOW - GRACE + 1), Verdict.WAIT),
        # ... and queued once it is past it (a job that never ended).
        (HeadFacts(False, HeadCheck.RUNNING, waiting_since=NOW - GRACE), Verdict.QUEUE),
        (HeadFacts(False, HeadCheck.NONE, True, NOW - GRACE - 1), Verdict.QUEUE),
        # A lost delivery is queued at once, whatever was noted before.
        (HeadFacts(False, HeadCheck.NONE, waiting_since=NOW - 5), Verdict.QUEUE),
    ],
)
def test_judge(facts: HeadFacts, verdict: Verdict) -> None:
    assert judge(facts, now=NOW, grace=GRACE) is verdict


def test_the_forge_is_asked_only_when_nothing_cheaper_says() -> None:
    def asked(facts: HeadFacts) -> bool:
        return forge_asked(facts, now=NOW, grace=GRACE)

    assert not asked(HeadFacts(checked=True))
    assert asked(HeadFacts(checked=False))
    assert asked(HeadFacts(False, received=True))  # first seen: is it done?
    assert not asked(HeadFacts(False, received=True, waiting_since=NOW - 10))
    assert asked(HeadFacts(False, received=True, waiting_since=NOW - GRACE))
    assert asked(HeadFacts(False, waiting_since=NOW - 10))  # no job known: ask


REPO = RepoRef(
    ForgeKind.GITHUB,
    "octo/gitops",
    "99",
    "https://github.com/octo/gitops.git",
    "https://github.com/octo/gitops",
    "main",
    installation_id=42,
)


def test_a_check_is_queued_as_the_pull_requests_webhook_would_have_been() -> None:
    pull = PullRequestRef(
        7, "u", SHA, "b" * 40, "main", author="alice", head_ref="feature", from_fork=True
    )
    event = change_request(REPO, pull)
    assert event is not None
    assert (event.number, event.head_sha, event.base_sha, event.base_ref) == (
        7,
        SHA,
        "b" * 40,
        "main",
    )
    assert (event.is_fork, event.head_repo_full_name, event.installation_id) == (True, None, 42)
    assert event_from_dict(event_to_dict(event)) == event  # it travels to the job intact
    assert change_request(REPO, PullRequestRef(7, "u", None)) is None
    assert change_request(REPO, PullRequestRef(7, "u", SHA)) is None  # no base branch named


def test_one_delivery_id_per_pull_request_and_head() -> None:
    one = delivery_id("github:octo/gitops:7", SHA)
    assert one == delivery_id("github:octo/gitops:7", SHA)
    assert one.startswith("reconcile-") and len(one) == len("reconcile-") + 32
    assert one != delivery_id("github:octo/gitops:7", "b" * 40)
    assert one != delivery_id("github:octo/gitops:8", SHA)
