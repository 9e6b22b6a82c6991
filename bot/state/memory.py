"""The state in this process's memory: lost on restart, as the in-process queue's jobs are."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from datetime import datetime

from bot.approvals.approval import Approval
from bot.approvals.seen import SHOWN_KEPT, ShownCheck
from bot.forges.base import Permission
from bot.state.base import PERMISSION_TTL, AuditRecord, StateStore
from bot.state.locks import MemoryRepoLock

AUDIT_RECORDS_KEPT = 10_000


class MemoryHeads:
    def __init__(self) -> None:
        self._heads: dict[str, list[str]] = {}  # pull key -> heads in the order they arrived
        self._lock = threading.Lock()

    def record_head(self, pull: str, sha: str, *, redelivery: bool) -> None:
        with self._lock:
            seen = self._heads.setdefault(pull, [])
            if sha in seen:
                if redelivery:
                    return
                seen.remove(sha)
            seen.append(sha)

    def latest_head(self, pull: str) -> str | None:
        with self._lock:
            heads = self._heads.get(pull)
            return heads[-1] if heads else None


class MemoryLineComments:
    def __init__(self) -> None:
        self._commented: set[str] = set()
        self._lock = threading.Lock()

    def has_line_comments(self, pull: str) -> bool:
        with self._lock:
            return pull in self._commented

    def remember_line_comments(self, pull: str) -> None:
        with self._lock:
            self._commented.add(pull)


class MemoryApprovals:
    def __init__(self) -> None:
        self._by_pull: dict[str, dict[str, Approval]] = {}
        self._lock = threading.Lock()

    def approvals(self, pull: str) -> tuple[Approval, ...] | None:
        with self._lock:
            found = self._by_pull.get(pull)
            return None if found is None else tuple(found.values())

    def record(self, pull: str, approval: Approval) -> None:
        with self._lock:
            found = self._by_pull.setdefault(pull, {})
            found.pop(approval.approver, None)  # the newest last, as listed back
            found[approval.approver] = approval

    def withdraw(self, pull: str, approver: str) -> Approval | None:
        with self._lock:
            found = self._by_pull.setdefault(pull, {})
            return found.pop(approver, None)

    def restore(self, pull: str, approvals: Sequence[Approval]) -> None:
        with self._lock:
            self._by_pull[pull] = {a.approver: a for a in approvals}

    def forget(self) -> None:
        """Drop everything (a test's stand-in for a flushed Redis)."""
        with self._lock:
            self._by_pull.clear()


class MemoryShownChecks:
    def __init__(self) -> None:
        self._by_pull: dict[str, list[ShownCheck]] = {}
        self._lock = threading.Lock()

    def shown(self, pull: str) -> tuple[ShownCheck, ...] | None:
        with self._lock:
            found = self._by_pull.get(pull)
            return None if not found else tuple(found)

    def record_shown(self, pull: str, check: ShownCheck) -> None:
        with self._lock:
            found = self._by_pull.setdefault(pull, [])
            found.append(check)
            del found[:-SHOWN_KEPT]

    def forget(self) -> None:
        """Drop everything (a test's stand-in for a flushed Redis)."""
        with self._lock:
            self._by_pull.clear()


class MemoryAudit:
    def __init__(self, kept: int = AUDIT_RECORDS_KEPT) -> None:
        self._records: deque[AuditRecord] = deque(maxlen=kept)
        self._lock = threading.Lock()

    def append(self, record: AuditRecord) -> None:
        with self._lock:
            self._records.append(record)

    def recent(
        self, *, repo: str | None = None, since: datetime | None = None, limit: int = 100
    ) -> list[AuditRecord]:
        with self._lock:
            records = list(self._records)
        found = [
            r
            for r in reversed(records)
            if (repo is None or r.repo == repo) and (since is None or r.time >= since)
        ]
        return found[:limit]


class MemoryPermissions:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._answers: dict[tuple[str, str, str], tuple[float, Permission]] = {}
        self._lock = threading.Lock()

    def get(self, forge: str, repo: str, user: str) -> Permission | None:
        with self._lock:
            found = self._answers.get((forge, repo, user))
            if found is None or self._clock() - found[0] >= PERMISSION_TTL:
                return None
            return found[1]

    def put(self, forge: str, repo: str, user: str, permission: Permission) -> None:
        with self._lock:
            now = self._clock()
            self._answers = {k: v for k, v in self._answers.items() if now - v[0] < PERMISSION_TTL}
            self._answers[(forge, repo, user)] = (now, permission)


class MemoryCheckedHeads:
    def __init__(self) -> None:
        self._checked: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def checked(self, pull: str, sha: str) -> bool:
        with self._lock:
            return (pull, sha) in self._checked

    def remember_checked(self, pull: str, sha: str) -> None:
        with self._lock:
            self._checked.add((pull, sha))


class MemoryOnboarding:
    def __init__(self) -> None:
        self._proposed: set[str] = set()
        self._declined: set[str] = set()
        self._lock = threading.Lock()

    def proposed(self, repo_key: str) -> bool:
        with self._lock:
            return repo_key in self._proposed

    def remember_proposed(self, repo_key: str) -> None:
        with self._lock:
            self._proposed.add(repo_key)

    def declined(self, repo_key: str) -> bool:
        with self._lock:
            return repo_key in self._declined

    def remember_declined(self, repo_key: str) -> None:
        with self._lock:
            self._declined.add(repo_key)

    def forget_declined(self, repo_key: str) -> None:
        with self._lock:
            self._declined.discard(repo_key)


def memory_state(clock: Callable[[], float] | None = None) -> StateStore:
    return StateStore(
        MemoryHeads(),
        MemoryLineComments(),
        MemoryApprovals(),
        MemoryShownChecks(),
        MemoryAudit(),
        MemoryPermissions(clock or time.monotonic),
        MemoryRepoLock(),
        MemoryOnboarding(),
        MemoryCheckedHeads(),
    )
