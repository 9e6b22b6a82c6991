"""The state in this process's memory: lost on restart, as the in-process queue's jobs are."""

from __future__ import annotations

import threading

from bot.state.base import StateStore


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


def memory_state() -> StateStore:
    return StateStore(MemoryHeads(), MemoryLineComments())
