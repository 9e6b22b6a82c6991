"""The tree sources a check reads commits from, and the one for a repository on disk."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Protocol

from bot.errors import SnapshotError
from bot.forges.base import GitCredentials
from bot.git.repository import GitRepository


class TreeSource(Protocol):
    """Where a check reads commits from: a mirror of the forge's repository (``GitStore``), or
    the repository itself for the local forge."""

    def fetch(
        self, credentials: GitCredentials | None, refs: Sequence[str], *, want: Sequence[str] = ()
    ) -> None: ...

    def prefetch_blobs(
        self, credentials: GitCredentials | None, commit: str, paths: Sequence[str]
    ) -> int: ...

    def changed_paths(self, base: str, head: str) -> list[str]: ...

    def fetched_ref(self, ref: str) -> str | None:
        """The commit a ref fetched by ``fetch`` points at (e.g. ``refs/heads/main``)."""
        ...

    def repository(self) -> GitRepository: ...


@contextlib.contextmanager
def local_tree(path: str) -> Iterator[TreeSource]:
    """A repository on disk as a tree source: every object is already there."""
    yield _LocalTree(GitRepository(path))


class _LocalTree:
    def __init__(self, repository: GitRepository) -> None:
        self._repository = repository

    def fetch(
        self, credentials: GitCredentials | None, refs: Sequence[str], *, want: Sequence[str] = ()
    ) -> None:
        for sha in want:
            self._repository.resolve(sha)  # raises when the commit is not there

    def prefetch_blobs(
        self, credentials: GitCredentials | None, commit: str, paths: Sequence[str]
    ) -> int:
        return 0

    def changed_paths(self, base: str, head: str) -> list[str]:
        return self._repository.changed_paths(base, head)

    def fetched_ref(self, ref: str) -> str | None:
        try:
            return self._repository.resolve(ref)
        except SnapshotError:
            return None

    def repository(self) -> GitRepository:
        return self._repository
