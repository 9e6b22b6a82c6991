"""The state the bot keeps per pull request, one protocol per concern.

Each concern has a Redis implementation (:mod:`bot.state.redis_state`, shared by every web and
worker process) and an in-memory one (:mod:`bot.state.memory`, for the in-process queue and
tests). Approvals, audit records and pull request dedupe get a protocol here, an
implementation in each module, and a field of :class:`StateStore`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from bot.approvals.approval import Approval
from bot.approvals.seen import ShownCheck
from bot.errors import IchorError
from bot.forges.base import Permission


def pull_key(forge: str, full_name: str, number: int) -> str:
    """The key every store files a pull request under."""
    return f"{forge}:{full_name}:{number}"


def merge_group_key(forge: str, full_name: str, head_sha: str) -> str:
    """The key a GitHub merge group is filed under: its head, a commit GitHub builds anew for
    every group."""
    return f"{forge}:{full_name}:merge-group:{head_sha}"


# What a merge group's head record holds once the group is destroyed (design.md 4); it holds
# nothing before, so a group's record is only ever "ended" or absent.
GROUP_ENDED = "ended"


class HeadReader(Protocol):
    """The newest head sha received for each pull request: only its result is posted."""

    def latest_head(self, pull: str) -> str | None: ...


def group_ended(heads: HeadReader, group: str) -> bool:
    """Whether the merge group filed under ``group`` (:func:`merge_group_key`) was destroyed:
    then nothing more is posted for it."""
    return heads.latest_head(group) == GROUP_ENDED


class HeadStore(HeadReader, Protocol):
    def record_head(self, pull: str, sha: str, *, redelivery: bool) -> None:
        """Record a head as received. A new delivery's head becomes the newest, even one seen
        before (a force-push back to it); a redelivery of a failed job is the same old event
        again and never rewinds a newer head."""
        ...


class CheckedHeads(Protocol):
    """The heads of each pull request whose check ended with a result on the forge (a verdict,
    or the error that stands in for one), or with nothing to post (no ``.ichor.yaml``): what
    the reconciler need not ask the forge about again (design.md 7)."""

    def checked(self, pull: str, sha: str) -> bool: ...

    def remember_checked(self, pull: str, sha: str) -> None: ...


class LineCommentMemory(Protocol):
    """Whether the bot ever left line comments on a pull request (so a clean one with none
    needs no listing of its comments)."""

    def has_line_comments(self, pull: str) -> bool: ...

    def remember_line_comments(self, pull: str) -> None: ...


class ShownChecks(Protocol):
    """The checks published on each pull request and the objects each showed waiting, newest
    kept (:data:`bot.approvals.seen.SHOWN_KEPT`): what an ``/approve`` may cover."""

    def shown(self, pull: str) -> tuple[ShownCheck, ...] | None:
        """Oldest first; None when nothing is recorded (never, or Redis lost it)."""
        ...

    def record_shown(self, pull: str, check: ShownCheck) -> None: ...


class ApprovalStore(Protocol):
    """The approvals given on each pull request, one per approver (a later one replaces it).
    Kept in Redis and, through the bot's reply comments, on the forge: ``approvals`` is None
    when nothing is recorded here, and the caller rebuilds from the forge and ``restore``s."""

    def approvals(self, pull: str) -> tuple[Approval, ...] | None: ...

    def record(self, pull: str, approval: Approval) -> None: ...

    def withdraw(self, pull: str, approver: str) -> Approval | None:
        """Remove ``approver``'s approval; the removed one, or None if there was none."""
        ...

    def restore(self, pull: str, approvals: Sequence[Approval]) -> None:
        """Replace what is recorded (an empty sequence records "none", unlike no record)."""
        ...


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One command or change request (design.md 6.4). ``result`` is ``done``, ``pr-opened``,
    ``pr-existing``, ``refused: <why>``, ``usage: <why>`` or ``error: <why>``."""

    time: datetime
    forge: str
    repo: str
    actor: str
    verb: str
    result: str
    number: int | None = None
    target: str | None = None
    object: str | None = None
    pr_url: str | None = None
    delivery: str | None = None


class AuditLog(Protocol):
    def append(self, record: AuditRecord) -> None: ...

    def recent(
        self, *, repo: str | None = None, since: datetime | None = None, limit: int = 100
    ) -> list[AuditRecord]:
        """Newest first."""
        ...


class PermissionCache(Protocol):
    """Permission answers, kept at most ``PERMISSION_TTL`` seconds per (repository, user)."""

    def get(self, forge: str, repo: str, user: str) -> Permission | None: ...

    def put(self, forge: str, repo: str, user: str, permission: Permission) -> None: ...


PERMISSION_TTL = 60


class LockTimeout(IchorError):
    """The lock stayed held by someone else for as long as the caller would wait."""


class RepoLock(Protocol):
    def hold(self, key: str, *, ttl: float, wait: float) -> AbstractContextManager[None]:
        """Hold the lock named ``key`` for the ``with`` block: wait up to ``wait`` seconds
        for it (else :class:`LockTimeout`); it expires ``ttl`` seconds after it was taken,
        so ``ttl`` must exceed the longest fetch-build-push."""
        ...


def repo_lock_key(forge: str, full_name: str) -> str:
    """The key one repository's pushes are serialized under."""
    return f"{forge}:{full_name}"


def onboarding_key(forge: str, full_name: str) -> str:
    """The key a repository's onboarding is remembered under."""
    return f"{forge}:{full_name}"


class OnboardingMemory(Protocol):
    """Whether a repository was offered its onboarding pull request (design.md 6.6), and whether
    it declined (closed it unmerged): a trigger proposes once, and never again after that."""

    def proposed(self, repo_key: str) -> bool: ...

    def remember_proposed(self, repo_key: str) -> None: ...

    def declined(self, repo_key: str) -> bool: ...

    def remember_declined(self, repo_key: str) -> None: ...

    def forget_declined(self, repo_key: str) -> None:
        """``ichor-bot onboard`` asks again: the next proposal is not a re-proposal."""
        ...


@dataclass(frozen=True, slots=True)
class StateStore:
    heads: HeadStore
    line_comments: LineCommentMemory
    approvals: ApprovalStore
    shown: ShownChecks
    audit: AuditLog
    permissions: PermissionCache
    locks: RepoLock
    onboarding: OnboardingMemory
    checked: CheckedHeads
