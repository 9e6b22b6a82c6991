"""The state the bot keeps per pull request, one protocol per concern.

Each concern has a Redis implementation (:mod:`bot.state.redis_state`, shared by every web and
worker process) and an in-memory one (:mod:`bot.state.memory`, for the in-process queue and
tests). Approvals, audit records and pull request dedupe get a protocol here, an
implementation in each module, and a field of :class:`StateStore`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


def pull_key(forge: str, full_name: str, number: int) -> str:
    """The key every store files a pull request under."""
    return f"{forge}:{full_name}:{number}"


class HeadReader(Protocol):
    """The newest head sha received for each pull request: only its result is posted."""

    def latest_head(self, pull: str) -> str | None: ...


class HeadStore(HeadReader, Protocol):
    def record_head(self, pull: str, sha: str, *, redelivery: bool) -> None:
        """Record a head as received. A new delivery's head becomes the newest, even one seen
        before (a force-push back to it); a redelivery of a failed job is the same old event
        again and never rewinds a newer head."""
        ...


class LineCommentMemory(Protocol):
    """Whether the bot ever left line comments on a pull request (so a clean one with none
    needs no listing of its comments)."""

    def has_line_comments(self, pull: str) -> bool: ...

    def remember_line_comments(self, pull: str) -> None: ...


@dataclass(frozen=True, slots=True)
class StateStore:
    heads: HeadStore
    line_comments: LineCommentMemory
