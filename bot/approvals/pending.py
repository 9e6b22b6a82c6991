"""Which new objects of strict targets still wait for ``/approve`` (design.md 5.1). Pure.

A *strict new object* is a managed object of a ``strict`` target whose identity the base's
report of that target does not have (the target had no report at base: every object is new).
An approval covers an object when the object's exact fingerprint (identity and digest) is in
the approval's set, so a later push keeps the approval of every object it leaves unchanged,
and an object changed since needs a new one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.approvals.approval import Approval, Fingerprint
from bot.approvals.fingerprints import fingerprint
from bot.gate.policy import TargetMode
from bot.gate.report import ManagedObject, Report


@dataclass(frozen=True, slots=True)
class NewObject:
    """A managed object of strict target ``target`` that the base does not have."""

    target: str
    object: ManagedObject

    @property
    def fingerprint(self) -> Fingerprint:
        return fingerprint(self.object)

    @property
    def identity(self) -> str:
        return self.object.shown

    @property
    def path(self) -> str:
        return self.object.path


@dataclass(frozen=True, slots=True)
class ApprovalStatus:
    """Each new object either waits or is approved (by the first approval, in the order
    given, that covers it); both in the order of the new objects."""

    waiting: tuple[NewObject, ...] = ()
    approved: tuple[tuple[NewObject, Approval], ...] = ()
    # A waiting object's newest approval of an earlier version of it (the object changed since).
    outdated: tuple[tuple[NewObject, Approval], ...] = ()

    @property
    def complete(self) -> bool:
        return not self.waiting

    @property
    def objects(self) -> int:
        return len(self.waiting) + len(self.approved)

    @property
    def waiting_targets(self) -> tuple[str, ...]:
        """The targets with an object waiting, in the order of the objects."""
        return tuple(dict.fromkeys(o.target for o in self.waiting))


def strict_new_objects(
    head: Report, base: Report | None, modes: Mapping[str, TargetMode]
) -> tuple[NewObject, ...]:
    """The strict targets' managed objects at head whose identity is not among the base's
    managed objects of the same target, in the head report's order."""
    known = {t.name: {m.identity for m in t.managed} for t in base.targets} if base else {}
    found: list[NewObject] = []
    for target in head.targets:
        if modes.get(target.name) != "strict":
            continue
        before = known.get(target.name, set())
        found.extend(NewObject(target.name, m) for m in target.managed if m.identity not in before)
    return tuple(found)


def counts_for(approval: Approval, *, pr_author: str | None, allow_author_approval: bool) -> bool:
    """Whether ``approval`` counts: the pull request's author's own does not, unless allowed.
    Logins are compared case-insensitively, as every forge treats them."""
    if allow_author_approval or not pr_author:
        return True
    return approval.approver.casefold() != pr_author.casefold()


def approval_status(
    new_objects: Sequence[NewObject],
    approvals: Sequence[Approval],
    *,
    pr_author: str | None,
    allow_author_approval: bool,
) -> ApprovalStatus:
    """Which of ``new_objects`` the ``approvals`` (oldest first) cover, and which wait."""
    counted = [
        a
        for a in approvals
        if counts_for(a, pr_author=pr_author, allow_author_approval=allow_author_approval)
    ]
    waiting: list[NewObject] = []
    approved: list[tuple[NewObject, Approval]] = []
    outdated: list[tuple[NewObject, Approval]] = []
    for obj in new_objects:
        wanted = obj.fingerprint
        by = next((a for a in counted if wanted in a.fingerprints), None)
        if by is not None:
            approved.append((obj, by))
            continue
        waiting.append(obj)
        earlier = [a for a in counted if any(f.identity == wanted.identity for f in a.fingerprints)]
        if earlier:
            outdated.append((obj, earlier[-1]))
    return ApprovalStatus(tuple(waiting), tuple(approved), tuple(outdated))
