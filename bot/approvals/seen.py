"""What an ``/approve`` may cover: the objects its author could have seen waiting (design.md 5.1).

A job reads the pull request as it is when the job runs, which may be after the author pushed
more. So an approval never covers "whatever is new at the head": it covers the new objects at
the head that a check the bot published *before the comment was written* showed as waiting
(for a check-run button, that check run's own head). An object that first appeared later
waits, and the reply names it.

Times: ``published_at`` is taken after the forge accepted the check, so it is no earlier than
when people could see it; a comment's ``created_at`` comes from the forge, often in whole
seconds (the true moment is up to a second later). A check counts only when it was published
strictly before that stamp: a check published in the comment's own second does not count.
Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.approvals.approval import Fingerprint
from bot.approvals.pending import NewObject

# Per pull request: more than any person reads back through; the newest are kept.
SHOWN_KEPT = 50


@dataclass(frozen=True, slots=True)
class ShownCheck:
    """A check the bot published on a pull request: at ``head_sha``, at ``published_at``
    (aware, UTC), showing ``waiting`` as the objects that wait for ``/approve``."""

    head_sha: str
    published_at: datetime
    waiting: frozenset[Fingerprint]


@dataclass(frozen=True, slots=True)
class AskedAt:
    """A comment written at ``created_at`` (aware), as the forge stamped it."""

    created_at: datetime


@dataclass(frozen=True, slots=True)
class AskedOn:
    """A check-run button pressed on the check of ``head_sha``."""

    head_sha: str


Asked = AskedAt | AskedOn


def seen_by(asked: Asked, shown: Iterable[ShownCheck]) -> frozenset[Fingerprint]:
    """Every fingerprint shown as waiting to whoever ``asked``."""
    if isinstance(asked, AskedOn):
        chosen = [s for s in shown if s.head_sha == asked.head_sha]
    else:
        chosen = [s for s in shown if s.published_at < asked.created_at]
    return frozenset().union(*(s.waiting for s in chosen))


@dataclass(frozen=True, slots=True)
class ApprovalScope:
    """The head's new objects split by what the approver could have seen."""

    covered: tuple[NewObject, ...]
    unseen: tuple[NewObject, ...]


def approval_scope(objects: Sequence[NewObject], seen: frozenset[Fingerprint]) -> ApprovalScope:
    covered = tuple(o for o in objects if o.fingerprint in seen)
    unseen = tuple(o for o in objects if o.fingerprint not in seen)
    return ApprovalScope(covered, unseen)
