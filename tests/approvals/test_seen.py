"""What an ``/approve`` may cover: the objects checks published before it showed waiting."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.approvals.approval import Fingerprint
from bot.approvals.pending import NewObject
from bot.approvals.seen import AskedAt, AskedOn, ShownCheck, approval_scope, seen_by
from bot.gate.content.identity import Identity
from bot.gate.report import ManagedObject

T0 = datetime(2026, 12, 4, 20, 0, 0, tzinfo=UTC)
H1, H2 = "1" * 40, "2" * 40


def obj(name: str, digest: str = "d") -> NewObject:
    identity: Identity = ("", "ConfigMap", "web", name)
    return NewObject("prod", ManagedObject(identity, f"prod/{name}.yaml", 1, digest * 64))


A, B, LATE = obj("a"), obj("b"), obj("late")


def prints(*objects: NewObject) -> frozenset[Fingerprint]:
    return frozenset(o.fingerprint for o in objects)


SHOWN = (
    ShownCheck(H1, T0, prints(A)),
    ShownCheck(H1, T0 + timedelta(seconds=5), prints(A, B)),
    ShownCheck(H2, T0 + timedelta(seconds=9), prints(A, B, LATE)),
)


def test_a_comment_sees_every_check_published_strictly_before_it() -> None:
    assert seen_by(AskedAt(T0), SHOWN) == frozenset()
    assert seen_by(AskedAt(T0 + timedelta(milliseconds=1)), SHOWN) == prints(A)
    # A check published in the comment's own (whole-second) stamp does not count.
    assert seen_by(AskedAt(T0 + timedelta(seconds=5)), SHOWN) == prints(A)
    assert seen_by(AskedAt(T0 + timedelta(seconds=6)), SHOWN) == prints(A, B)
    assert seen_by(AskedAt(T0 + timedelta(hours=1)), SHOWN) == prints(A, B, LATE)


def test_a_button_sees_its_own_check_runs_head_only() -> None:
    assert seen_by(AskedOn(H1), SHOWN) == prints(A, B)
    assert seen_by(AskedOn(H2), SHOWN) == prints(A, B, LATE)
    assert seen_by(AskedOn("3" * 40), SHOWN) == frozenset()


def test_the_scope_splits_the_heads_objects_by_what_was_seen() -> None:
    changed = obj("b", digest="e")  # b as changed since the check: a new fingerprint
    scope = approval_scope([A, changed, LATE], prints(A, B))
    assert scope.covered == (A,)
    assert scope.unseen == (changed, LATE)
