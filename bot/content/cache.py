"""A cache of file facts keyed by blob id: content-addressed, so it is never stale.

The key also carries ``FACTS_VERSION``; bump it whenever :mod:`bot.content.facts` or the YAML
reading under it changes what it extracts, and older entries are simply not found.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Protocol

from bot.content.facts import FileFacts

FACTS_VERSION = 3  # 3: duplicate mapping keys are invalid-yaml


def cache_key(oid: str) -> str:
    return f"v{FACTS_VERSION}-{oid}"


class FactsCache(Protocol):
    def get(self, oid: str) -> FileFacts | None: ...

    def put(self, oid: str, facts: FileFacts) -> None: ...


class MemoryFactsCache:
    """In-process, bounded (least recently used entries go first)."""

    def __init__(self, max_entries: int = 200_000) -> None:
        self._entries: OrderedDict[str, FileFacts] = OrderedDict()
        self._max = max_entries

    def __len__(self) -> int:
        return len(self._entries)

    def copy(self) -> MemoryFactsCache:
        clone = MemoryFactsCache(self._max)
        clone._entries = self._entries.copy()
        return clone

    def get(self, oid: str) -> FileFacts | None:
        facts = self._entries.get(oid)
        if facts is not None:
            self._entries.move_to_end(oid)
        return facts

    def put(self, oid: str, facts: FileFacts) -> None:
        self._entries[oid] = facts
        self._entries.move_to_end(oid)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)


class DirectoryFactsCache:
    """On disk, shared by processes on one machine; writes are atomic renames.

    Entries are pickles written only by this program into a directory it owns; a damaged or
    unreadable entry is treated as missing.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._root = Path(root)

    def _path(self, oid: str) -> Path:
        key = cache_key(oid)
        return self._root / key[-2:] / key

    def get(self, oid: str) -> FileFacts | None:
        try:
            data = self._path(oid).read_bytes()
        except OSError:
            return None
        try:
            facts = pickle.loads(data)  # noqa: S301 - our own entries, see the class docstring
        except Exception:  # a damaged entry is a miss, never an error
            return None
        return facts if isinstance(facts, FileFacts) else None

    def put(self, oid: str, facts: FileFacts) -> None:
        path = self._path(oid)
        with contextlib.suppress(OSError):  # a cache that cannot write is only slower
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL))
            Path(tmp).replace(path)


class LayeredFactsCache:
    """Memory in front of a shared store: a worker's repeated checks never touch the disk, and
    what one worker parsed, the others find."""

    def __init__(self, near: FactsCache, far: FactsCache) -> None:
        self._near = near
        self._far = far

    def get(self, oid: str) -> FileFacts | None:
        facts = self._near.get(oid)
        if facts is None:
            facts = self._far.get(oid)
            if facts is not None:
                self._near.put(oid, facts)
        return facts

    def put(self, oid: str, facts: FileFacts) -> None:
        self._near.put(oid, facts)
        self._far.put(oid, facts)
