"""Commits written straight into a bare, blob-less mirror: no checkout, no lazy fetch.

Blobs go in with ``hash-object -w``; the tree is the parent's tree read into a temporary index
(``GIT_INDEX_FILE`` in a temp dir, never the mirror's), changed with ``update-index`` and
written with ``write-tree --missing-ok``. The parent's blobs are mostly not in the mirror, and
without ``--missing-ok`` ``write-tree`` asks for each entry of a touched directory, which in a
partial clone is a lazy fetch (refused here: every transport is forbidden for local commands).
The entries it would check come from the parent's own tree, so skipping the check is safe.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bot.errors import GitStoreError
from bot.git.store import Mirror
from bot.paths import decode_path, display_path, encode_path

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_NULL_OID = "0" * 40
_KEEP_MODES = frozenset({"100644", "100755"})  # a regular file keeps its executable bit
_NEW_MODE = "100644"
_CHUNK = 500  # --cacheinfo arguments per update-index, well below the argv limit


class CommitError(GitStoreError):
    """The changes cannot be committed as asked (a missing path, a file/directory clash)."""


class UnsafePathError(CommitError):
    """A path that could write outside the tree or into git's own files."""


@dataclass(frozen=True, slots=True)
class GitIdentity:
    """Who a commit names as author or committer."""

    name: str
    email: str

    def __post_init__(self) -> None:
        for value in (self.name, self.email):
            if not value.strip() or any(c in value for c in "<>\n\r\0"):
                raise ValueError(f"not a usable git identity part: {value!r}")


def check_path(path: str) -> None:
    """Refuse (:class:`UnsafePathError`) a path that is not a plain repository-relative one."""
    raw = encode_path(path)
    if not raw or b"\0" in raw or b"\n" in raw or b"\r" in raw:
        raise UnsafePathError(f"refusing to write path {display_path(path)!r}")
    if raw.startswith(b"/"):
        raise UnsafePathError(f"refusing to write absolute path {display_path(path)!r}")
    for segment in raw.split(b"/"):
        if segment in (b"", b".", b".."):
            raise UnsafePathError(f"refusing to write path {display_path(path)!r}")
        # Case-folded: .GIT is git's own directory on a case-insensitive checkout.
        if segment.lower() == b".git":
            raise UnsafePathError(f"refusing to write inside .git: {display_path(path)!r}")


def build_commit(
    mirror: Mirror,
    *,
    parent: str,
    changes: Mapping[str, bytes | None],
    message: str,
    author: GitIdentity,
    co_author: str | None = None,
    date: datetime | None = None,
) -> str:
    """A new commit on ``parent`` with ``changes`` (path -> new bytes, None deletes); its id.

    ``author`` is both author and committer (the bot); ``co_author`` becomes a
    ``Co-authored-by`` trailer. ``date`` (timezone-aware) fixes both dates, for tests and
    reproducible ids; without it git uses the current time. Nothing is checked out and nothing
    is fetched: the parent must already be in the mirror.
    """
    parent = _commit_id(mirror, parent)
    if not changes:
        raise CommitError("no changes to commit")
    for path in changes:
        check_path(path)
    text = _message(message, co_author)
    blobs = {path: _write_blob(mirror, data) for path, data in changes.items() if data is not None}
    with tempfile.TemporaryDirectory(prefix="ichor-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        mirror.git(["read-tree", parent], env=env)
        modes = _existing_modes(mirror, env, list(changes))
        _check_modes(changes, modes)
        removals = [p for p, data in changes.items() if data is None]
        for path in removals:
            if path not in modes:
                raise CommitError(f"cannot delete {display_path(path)}: not a file at {parent}")
        _remove(mirror, env, removals)
        additions = [f"{modes.get(path, _NEW_MODE)},{oid},{path}" for path, oid in blobs.items()]
        _add(mirror, env, additions)
        tree = mirror.git(["write-tree", "--missing-ok"], env=env).decode().strip()
    if tree == _tree_of(mirror, parent):
        raise CommitError(f"the changes leave the tree of {parent} as it is")
    args = ["commit-tree", "--no-gpg-sign", tree, "-p", parent]
    out = mirror.git(args, stdin=text.encode("utf-8"), env=_identity_env(author, date))
    return out.decode().strip()


def _commit_id(mirror: Mirror, parent: str) -> str:
    oid = parent.lower()
    if not _OID.fullmatch(oid):
        raise CommitError(f"not a full commit id: {parent!r}")
    try:
        mirror.git(["rev-parse", "--verify", "--quiet", f"{oid}^{{commit}}"])
    except GitStoreError:
        raise CommitError(f"commit {oid} is not in the mirror: fetch it first") from None
    return oid


def _tree_of(mirror: Mirror, commit: str) -> str:
    return mirror.git(["rev-parse", "--verify", f"{commit}^{{tree}}"]).decode().strip()


def _message(message: str, co_author: str | None) -> str:
    text = message.strip("\n")
    if not text.strip():
        raise CommitError("a commit needs a message")
    if co_author is not None:
        if not co_author.strip() or any(c in co_author for c in "\n\r\0"):
            raise CommitError(f"not a usable co-author: {co_author!r}")
        text += f"\n\nCo-authored-by: {co_author.strip()}"
    return text + "\n"


def _write_blob(mirror: Mirror, data: bytes) -> str:
    # --no-filters: the bytes as given, whatever attributes or autocrlf a config might set.
    args = ["hash-object", "-t", "blob", "-w", "--no-filters", "--stdin"]
    return mirror.git(args, stdin=data).decode().strip()


def _existing_modes(mirror: Mirror, env: dict[str, str], paths: list[str]) -> dict[str, str]:
    """Path -> mode of each of ``paths`` the parent has; a directory at one of them is refused
    (writing or deleting there would replace it whole)."""
    found: dict[str, str] = {}
    wanted = set(paths)
    for start in range(0, len(paths), _CHUNK):
        chunk = paths[start : start + _CHUNK]
        out = mirror.git(["ls-files", "--stage", "-z", "--", *chunk], env=env)
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, raw = record.partition(b"\t")
            path = decode_path(raw)
            if path not in wanted:  # an entry under a requested path: that path is a tree
                owner = next((p for p in chunk if path.startswith(p + "/")), path)
                raise CommitError(f"cannot change {display_path(owner)}: it is a directory")
            found[path] = meta.split()[0].decode()
    return found


def _check_modes(changes: Mapping[str, bytes | None], modes: Mapping[str, str]) -> None:
    for path, data in changes.items():
        mode = modes.get(path)
        if mode == "160000":
            raise CommitError(f"cannot change {display_path(path)}: it is a submodule")
        # New bytes for a symlink would move where it points, not edit a file.
        if data is not None and mode is not None and mode not in _KEEP_MODES:
            raise CommitError(f"cannot write {display_path(path)}: not a regular file")


def _remove(mirror: Mirror, env: dict[str, str], paths: list[str]) -> None:
    if paths:
        # Mode 0 removes the entry; --force-remove would need a work tree.
        stdin = b"".join(b"0 %s\t%s\0" % (_NULL_OID.encode(), encode_path(p)) for p in paths)
        mirror.git(["update-index", "-z", "--index-info"], stdin=stdin, env=env)


def _add(mirror: Mirror, env: dict[str, str], entries: list[str]) -> None:
    """Add or replace entries; without --replace, git refuses a path under a file (or a file
    over a directory) instead of silently dropping the other side."""
    for start in range(0, len(entries), _CHUNK):
        args = ["update-index", "--add"]
        for entry in entries[start : start + _CHUNK]:
            args += ["--cacheinfo", entry]
        try:
            mirror.git(args, env=env)
        except GitStoreError as exc:
            raise CommitError(f"cannot write the changes: {exc}") from None


def _identity_env(author: GitIdentity, date: datetime | None) -> dict[str, str]:
    env = {
        "GIT_AUTHOR_NAME": author.name,
        "GIT_AUTHOR_EMAIL": author.email,
        "GIT_COMMITTER_NAME": author.name,
        "GIT_COMMITTER_EMAIL": author.email,
    }
    if date is not None:
        offset = date.utcoffset()
        if offset is None:
            raise ValueError("a commit date needs a timezone")
        minutes = int(offset.total_seconds()) // 60
        sign = "-" if minutes < 0 else "+"
        stamp = f"@{int(date.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = stamp
    return env
