"""Snapshots read from a directory on disk, with ``lstat`` only: a link is never followed.

A top-level ``.git`` is skipped (it is the repository, not its tree); a nested directory that
holds a ``.git`` is a submodule and is reported as a gitlink, as git itself would record it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from bot.errors import NotARepositoryError, SnapshotError, UnreadableEntryError
from bot.git.snapshot import Entry, EntryKind, Reader, Snapshot
from bot.paths import decode_path, display_path


def read_directory(root: str | os.PathLike[str]) -> Snapshot:
    top = Path(root)
    if not top.is_dir():
        raise NotARepositoryError(f"{top}: not a directory")
    entries: list[Entry] = []
    empty: set[str] = set()
    # Depth first with a stack of listings, not recursion: a tree may be thousands deep. Each
    # listing keeps the count of entries before it: none added under it means it is empty.
    stack = [(b"", iter(_list(os.fsencode(top), b"")), 0)]
    while stack:
        rel_dir, children, before = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            if rel_dir and len(entries) == before:
                empty.add(decode_path(rel_dir))
            continue
        if not rel_dir and child.name == b".git":
            continue
        rel = rel_dir + b"/" + child.name if rel_dir else child.name
        if _add(child, rel, entries):
            stack.append((rel, iter(_list(child.path, rel)), len(entries)))
    return Snapshot(entries, revision=None, empty_directories=frozenset(empty))


def _list(abs_dir: bytes, rel_dir: bytes) -> list[os.DirEntry[bytes]]:
    try:
        with os.scandir(abs_dir) as it:
            return list(it)
    except OSError as exc:
        shown = display_path(decode_path(rel_dir)) or "."
        raise SnapshotError(f"cannot list {shown}: {exc.strerror}") from None


def _add(child: os.DirEntry[bytes], rel: bytes, out: list[Entry]) -> bool:
    """Record ``child``; True when it is a directory to walk into."""
    path = decode_path(rel)
    try:
        st = child.stat(follow_symlinks=False)
    except OSError as exc:
        raise SnapshotError(f"cannot stat {display_path(path)}: {exc.strerror}") from None
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        out.append(
            Entry(path, EntryKind.SYMLINK, st.st_size, reader=_link_reader(child.path, path))
        )
    elif stat.S_ISDIR(mode):
        if not os.path.lexists(os.path.join(child.path, b".git")):
            return True
        out.append(Entry(path, EntryKind.GITLINK, 0))
    elif stat.S_ISREG(mode):
        out.append(Entry(path, EntryKind.FILE, st.st_size, reader=_file_reader(child.path, path)))
    else:
        out.append(Entry(path, EntryKind.SPECIAL, 0, reader=_special_reader(path)))
    return False


def _file_reader(abs_path: bytes, path: str) -> Reader:
    def read() -> bytes:
        try:
            # O_NOFOLLOW: if the file was swapped for a link after the scan, refuse to follow it.
            fd = os.open(abs_path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
            with os.fdopen(fd, "rb") as fh:
                return fh.read()
        except OSError as exc:
            raise UnreadableEntryError(
                f"cannot read {display_path(path)}: {exc.strerror}"
            ) from None

    return read


def _link_reader(abs_path: bytes, path: str) -> Reader:
    def read() -> bytes:
        try:
            return os.readlink(abs_path)
        except OSError as exc:
            raise UnreadableEntryError(
                f"cannot read link {display_path(path)}: {exc.strerror}"
            ) from None

    return read


def _special_reader(path: str) -> Reader:
    def read() -> bytes:
        raise UnreadableEntryError(f"{display_path(path)} is not a regular file")

    return read
