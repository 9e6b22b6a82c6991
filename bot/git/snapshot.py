"""A tree snapshot: every entry of a repository tree at one revision, with lazy content.

Two sources build one: git objects at a revision (:mod:`bot.git.repository`) and a directory on
disk (:mod:`bot.git.directory`). Neither follows a symlink or runs anything from the repository.
Tests build one from a mapping with :meth:`Snapshot.from_files`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

from bot.paths import is_within, path_sort_key


class EntryKind(enum.StrEnum):
    FILE = "file"
    SYMLINK = "symlink"
    GITLINK = "gitlink"
    # A directory snapshot can meet a FIFO, socket or device; git cannot store one.
    SPECIAL = "special"


Reader = Callable[[], bytes]


def _unreadable() -> bytes:
    raise ValueError("this entry has no content")


@dataclass(frozen=True, slots=True)
class Entry:
    """One tree entry. ``size`` is known without reading; ``read()`` fetches the bytes."""

    path: str
    kind: EntryKind
    size: int
    oid: str | None = None
    reader: Reader = field(default=_unreadable, repr=False, compare=False)

    def read(self) -> bytes:
        return self.reader()


class Snapshot:
    """An immutable, path-ordered set of entries; close it to stop any helper process."""

    def __init__(
        self,
        entries: list[Entry],
        *,
        revision: str | None,
        closer: Callable[[], None] | None = None,
        batch_reader: Callable[[Sequence[Entry]], list[bytes]] | None = None,
        empty_directories: frozenset[str] = frozenset(),
    ) -> None:
        entries.sort(key=lambda e: path_sort_key(e.path))
        self._entries = tuple(entries)
        self._by_path = {e.path: e for e in entries}
        self.revision = revision
        # Directories holding no entry at any depth: only a directory on disk has them (git
        # stores no directory), and they let a target path that is one be told from a typo.
        self.empty_directories = empty_directories
        self._closer = closer
        self._batch_reader = batch_reader

    @classmethod
    def from_files(
        cls,
        files: Mapping[str, bytes],
        *,
        symlinks: Mapping[str, str] | None = None,
        gitlinks: Mapping[str, str] | None = None,
        revision: str | None = None,
    ) -> Snapshot:
        """An in-memory snapshot, for tests and callers that already hold the bytes."""
        entries = [
            Entry(p, EntryKind.FILE, len(data), reader=_constant(data)) for p, data in files.items()
        ]
        for p, target in (symlinks or {}).items():
            raw = target.encode()
            entries.append(Entry(p, EntryKind.SYMLINK, len(raw), reader=_constant(raw)))
        entries.extend(
            Entry(p, EntryKind.GITLINK, 0, oid=sha) for p, sha in (gitlinks or {}).items()
        )
        return cls(entries, revision=revision)

    @property
    def entries(self) -> tuple[Entry, ...]:
        return self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries)

    def get(self, path: str) -> Entry | None:
        return self._by_path.get(path)

    def under(self, root: str) -> Iterator[Entry]:
        """Entries at or below ``root`` (``""`` is the whole tree), in path order."""
        return (e for e in self._entries if is_within(e.path, root))

    def read_many(self, entries: Sequence[Entry]) -> list[bytes]:
        """The contents of ``entries``, in order; one streamed request where the source allows."""
        if self._batch_reader is not None:
            return self._batch_reader(entries)
        return [entry.read() for entry in entries]

    def close(self) -> None:
        if self._closer is not None:
            closer, self._closer = self._closer, None
            closer()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _constant(data: bytes) -> Reader:
    return lambda: data
