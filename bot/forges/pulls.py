"""Opening a pull (merge) request that may already be open."""

from __future__ import annotations

from collections.abc import Callable

from bot.errors import ForgeStatusError
from bot.forges.base import PullRequestRef


def open_or_find(
    open_: Callable[[], PullRequestRef],
    find: Callable[[], PullRequestRef | None],
    *,
    exists: int,
) -> PullRequestRef:
    """``open_()``; when the forge answers ``exists`` (its status for "already open": GitHub's
    422, GitLab's and Gitea's 409), the open one ``find()`` names. It exists after a retry
    whose first request landed, or when a concurrent job opened it."""
    try:
        return open_()
    except ForgeStatusError as exc:
        if exc.status != exists:
            raise
        existing = find()
        if existing is None:
            raise
        return existing
