"""The facts cache the gate is handed: keyed by blob id, content-addressed, never stale.

The gate sees only the protocol; the in-memory cache lives here, the one on disk in
:mod:`bot.state.facts_disk`, outside the gate.

The key also carries ``FACTS_VERSION``; bump it whenever :mod:`bot.gate.content.facts` or the YAML
reading under it changes what it extracts, and older entries are simply not found.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol

from bot.gate.content.facts import FileFacts

# 3: duplicate mapping keys are invalid-yaml; 4: object digests; 5: refused names and
# namespaces, kustomization entries' lines, the generateName message; 6: empty token Secrets,
# a kustomization's unknown keys and the files its refused fields read; 7: digests only when
# asked for (``FileFacts.digested``)
FACTS_VERSION = 7


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
