"""An in-memory tree for unit tests of the pure gate: a :class:`Snapshot` built from text,
with git's own blob ids (so a facts cache can key on them) and a log of every path read."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from textwrap import dedent

from bot.gate.policy import GatePolicy, TargetPolicy
from bot.gate.report import TargetReport
from bot.gate.run import run_gate
from bot.git.snapshot import Entry, EntryKind, Snapshot

Content = str | bytes


def blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob (SHA-1 object format)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class MemoryTree:
    """Files, symlinks and gitlinks held in memory; ``reads`` lists every path whose bytes the
    gate asked for, in order, so a test can show what is never read."""

    def __init__(
        self,
        files: Mapping[str, Content],
        *,
        symlinks: Mapping[str, str] | None = None,
        gitlinks: Mapping[str, str] | None = None,
        revision: str | None = None,
    ) -> None:
        self.reads: list[str] = []
        self._data = {p: _bytes(c) for p, c in files.items()}
        self._links = {p: t.encode() for p, t in (symlinks or {}).items()}
        self._gitlinks = dict(gitlinks or {})
        self._revision = revision

    def snapshot(self) -> Snapshot:
        entries = [
            Entry(p, EntryKind.FILE, len(d), oid=blob_id(d), reader=self._reader(p, d))
            for p, d in self._data.items()
        ]
        entries += [
            Entry(p, EntryKind.SYMLINK, len(t), oid=blob_id(t), reader=self._reader(p, t))
            for p, t in self._links.items()
        ]
        entries += [Entry(p, EntryKind.GITLINK, 0, oid=o) for p, o in self._gitlinks.items()]
        return Snapshot(entries, revision=self._revision, batch_reader=self._read_many)

    def _reader(self, path: str, data: bytes) -> Callable[[], bytes]:
        def read() -> bytes:
            self.reads.append(path)
            return data

        return read

    def _read_many(self, entries: Sequence[Entry]) -> list[bytes]:
        return [entry.read() for entry in entries]


def _bytes(content: Content) -> bytes:
    return content if isinstance(content, bytes) else dedent(content).lstrip("\n").encode()


def check_target(
    files: Mapping[str, Content],
    *,
    symlinks: Mapping[str, str] | None = None,
    gitlinks: Mapping[str, str] | None = None,
    target: TargetPolicy | None = None,
) -> TargetReport:
    """``run_gate`` over an in-memory tree with one target (by default ``t`` at ``t``)."""
    tree = MemoryTree(files, symlinks=symlinks, gitlinks=gitlinks)
    with tree.snapshot() as snapshot:
        report = run_gate(snapshot, GatePolicy(targets=(target or TargetPolicy("t", "t"),)))
    (only,) = report.targets
    return only
