"""The tree a change would make, as a snapshot the gate can read: the base with the change's
files written or removed. Nothing is written anywhere; the gate runs on this before any push
(design.md 6, "an edit whose result the gate would refuse is not pushed")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.git.snapshot import Entry, EntryKind, Reader, Snapshot


def overlay(base: Snapshot, changes: Mapping[str, bytes | None]) -> Snapshot:
    """``base`` with each path of ``changes`` replaced by its bytes (None: removed). The
    base's own entries keep their object ids, so the facts cache still serves them; the
    changed ones have none and are read afresh."""
    kept = [e for e in base.entries if e.path not in changes]
    written = {
        path: Entry(path, EntryKind.FILE, len(data), reader=_constant(data))
        for path, data in changes.items()
        if data is not None
    }

    def read_many(entries: Sequence[Entry]) -> list[bytes]:
        from_base = [e for e in entries if e.path not in written]
        read = iter(base.read_many(from_base)) if from_base else iter(())
        return [written[e.path].read() if e.path in written else next(read) for e in entries]

    return Snapshot([*kept, *written.values()], revision=None, batch_reader=read_many)


def _constant(data: bytes) -> Reader:
    return lambda: data
