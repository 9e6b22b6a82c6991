"""Snapshots read from a directory on disk, with ``lstat`` only: a link is never followed.

A top-level ``.git`` is skipped (it is the repository, not its tree); a nested directory that
holds a ``.git`` is a submodule and is reported as a gitlink, as git itself would record it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from bot.errors import NotARepositoryError, SnapshotError, UnreadableEntryError
from bot.paths import decode_path, display_path
from bot.snapshot import Entry, EntryKind, Reader, Snapshot


def read_directory(root: str | os.PathLike[str]) -> Snapshot:
    top = Path(root)
    if not top.is_dir():
        raise NotARepositoryError(f"{top}: not a directory")
    entries: list[Entry] = []
    _walk(os.fsencode(top), b"", entries, top_level=True)
    return Snapshot(entries, revision=None)


def _walk(abs_dir: bytes, rel_dir: bytes, out: list[Entry], *, top_level: bool) -> None:
    try:
        with os.scandir(abs_dir) as it:
            children = list(it)
    except OSError as exc:
        shown = display_path(decode_path(rel_dir)) or "."
        raise SnapshotError(f"cannot list {shown}: {exc.strerror}") from None
    for child in children:
        name = child.name
        if top_level and name == b".git":
            continue
        rel = rel_dir + b"/" + name if rel_dir else name
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
            if os.path.lexists(os.path.join(child.path, b".git")):
                out.append(Entry(path, EntryKind.GITLINK, 0))
            else:
                _walk(child.path, rel, out, top_level=False)
        elif stat.S_ISREG(mode):
            out.append(
                Entry(path, EntryKind.FILE, st.st_size, reader=_file_reader(child.path, path))
            )
        else:
            out.append(Entry(path, EntryKind.SPECIAL, 0, reader=_special_reader(path)))


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
