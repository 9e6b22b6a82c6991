"""The facts cache on disk: shared by the processes of one machine, outside the pure gate."""

from __future__ import annotations

import contextlib
import os
import pickle
import tempfile
from pathlib import Path

from bot.gate.content.cache import cache_key
from bot.gate.content.facts import FileFacts


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
