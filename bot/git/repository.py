"""Snapshots read from git objects: one ``ls-tree`` and one long-lived ``cat-file`` process.

Nothing is checked out and nothing from the repository runs: symlinks are blobs holding their
target, gitlinks are visible as commits. Sizes come from ``info`` requests before any content is
read, so a too-large file can be refused without fetching it.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from bot.errors import (
    NotARepositoryError,
    RevisionNotFoundError,
    SnapshotError,
    UnreadableEntryError,
)
from bot.git.snapshot import Entry, EntryKind, Reader, Snapshot
from bot.paths import decode_path, display_path

# Variables that would point git at some other repository than the one we name.
_LOCATING_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)
_FULL_OID = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
# Requests per round trip to cat-file: the requests of one chunk fit the 64 KiB pipe buffer,
# so writing them never waits on git, which may itself be waiting for us to read its answers.
_CHUNK = 400
# A unified diff hunk header: the new side's start and length.
_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def git_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _LOCATING_VARS}
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "LANGUAGE": "C"})
    return env


def _first_line(stderr: bytes) -> str:
    for line in stderr.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if line:
            return line.removeprefix("fatal: ").removeprefix("error: ")
    return "git failed without a message"


class GitRepository:
    """A local git repository (bare or with a work tree) read through git's plumbing only."""

    def __init__(
        self, path: str | os.PathLike[str], *, env: Mapping[str, str] | None = None
    ) -> None:
        """``env`` replaces git's environment (a mirror passes one that forbids every
        transport, so reading an object that is not there fails instead of fetching it)."""
        self.path = Path(path)
        self._env = dict(env) if env is not None else git_environment()
        if not self.path.is_dir():
            raise NotARepositoryError(f"{self.path}: not a directory")

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args],
            capture_output=True,
            env=self._env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if check and proc.returncode != 0:
            verb = next(a for a in args if not a.startswith("-"))
            raise SnapshotError(f"git {verb} failed in {self.path}: {_first_line(proc.stderr)}")
        return proc

    def resolve(self, rev: str) -> str:
        """The commit id ``rev`` names; raises :class:`RevisionNotFoundError` when none.

        One ``rev-parse`` both finds the repository and resolves the name, so a check costs
        two git processes (this and ``ls-tree``) before any content is read.
        """
        if not rev or rev.startswith("-") or "\n" in rev or "\0" in rev:
            raise RevisionNotFoundError(f"invalid revision {rev!r}")
        proc = self._run("rev-parse", "--verify", f"{rev}^{{commit}}", check=False)
        if proc.returncode == 0:
            return proc.stdout.decode().strip()
        message = _first_line(proc.stderr)
        if "not a git repository" in message:
            raise NotARepositoryError(f"{self.path}: not a git repository ({message})")
        if "Needed a single revision" in message or "unknown revision" in message:
            raise RevisionNotFoundError(f"revision {rev!r} not found in {self.path}")
        raise RevisionNotFoundError(f"revision {rev!r} not found in {self.path} ({message})")

    def in_index(self, path: str) -> bool:
        """Whether ``path`` is in the index (staged, or committed and unchanged there)."""
        proc = self._run("--literal-pathspecs", "ls-files", "-z", "--cached", "--", path)
        return bool(proc.stdout)

    def merge_base(self, one: str, other: str) -> str | None:
        """The best common ancestor of two commits, or None when they share no history."""
        proc = self._run("merge-base", one, other, check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def parent(self, commit: str) -> str | None:
        """The first parent of ``commit``; None for a root commit."""
        proc = self._run("rev-parse", "--verify", "--quiet", f"{commit}^1^{{commit}}", check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def changed_paths(self, base: str, head: str, *, added_only: bool = False) -> list[str]:
        """Paths that differ between two commits (with ``added_only``, those the change adds);
        compares trees only, so no blob is read (in a partial clone, nothing is fetched)."""
        # diff-tree is plumbing: no user diff configuration applies to it.
        only = ("--diff-filter=A",) if added_only else ()
        args = ("-r", "-z", "--name-only", "--no-renames", *only, "--end-of-options", base, head)
        proc = self._run("diff-tree", *args)
        return [decode_path(p) for p in proc.stdout.split(b"\0") if p]

    def touched_lines(self, base: str, head: str, path: str) -> frozenset[int]:
        """Lines of ``path`` at ``head`` that the change from ``base`` adds or modifies.

        One file per call, so no diff header (where git quotes odd names) needs parsing; no
        external diff or textconv driver runs.
        """
        args = ("-U0", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames")
        proc = self._run("--literal-pathspecs", "diff", *args, base, head, "--", path)
        lines: set[int] = set()
        for hunk in _HUNK.finditer(proc.stdout):
            start, count = int(hunk[1]), int(hunk[2] or 1)
            lines.update(range(start, start + count))
        return frozenset(lines)

    def snapshot(self, rev: str, paths: Sequence[str] | None = None) -> Snapshot:
        """The tree at ``rev``; with ``paths``, only the entries at or under those repo-relative
        paths (what a check of some targets needs: in a partial clone, listing sizes of blobs
        outside them would fetch those blobs)."""
        # A full object id (what webhooks carry) needs no rev-parse: ls-tree itself fails
        # when the object is not there, and one git process less matters on every check.
        commit = rev.lower() if _FULL_OID.fullmatch(rev) else self.resolve(rev)
        args = ["--literal-pathspecs", "ls-tree", "-r", "-z", "-l", "--full-tree", commit]
        if paths is not None and "" not in paths:
            if not paths:
                return Snapshot([], revision=commit)
            args += ["--", *sorted(set(paths))]
        # -l gives every blob's size with the listing: sizes are known before any content.
        proc = self._run(*args, check=False)
        if proc.returncode != 0:
            raise RevisionNotFoundError(f"revision {rev!r} not found in {self.path}")
        listing = proc.stdout
        catfile = CatFile(self.path, self._env)
        entries = _entries_from_listing(listing, catfile)
        return Snapshot(
            entries, revision=commit, closer=catfile.close, batch_reader=catfile.read_entries
        )


def _entries_from_listing(listing: bytes, catfile: CatFile) -> list[Entry]:
    entries = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, otype, raw_oid, raw_size = meta.split()
        path, kind, oid = decode_path(raw_path), _kind(mode, otype), raw_oid.decode()
        if kind is EntryKind.GITLINK:
            entries.append(Entry(path, kind, 0, oid=oid, reader=_no_content))
            continue
        if not raw_size.isdigit():  # git prints "BAD" when the object is not there
            raise UnreadableEntryError(
                f"cannot read {display_path(path)}: object {oid} is missing from the repository"
            )
        entries.append(Entry(path, kind, int(raw_size), oid=oid, reader=catfile.reader(oid, path)))
    return entries


def _kind(mode: bytes, otype: bytes) -> EntryKind:
    if mode == b"160000" or otype == b"commit":
        return EntryKind.GITLINK
    if mode == b"120000":
        return EntryKind.SYMLINK
    return EntryKind.FILE


def _no_content() -> bytes:
    raise UnreadableEntryError("a submodule has no content in this repository")


class CatFile:
    """One ``git cat-file --batch-command`` process, started on first use, shared by readers."""

    def __init__(self, repo: Path, env: Mapping[str, str] | None = None) -> None:
        self._repo = repo
        self._env = dict(env) if env is not None else git_environment()
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        if self._proc is None:
            self._proc = subprocess.Popen(
                ["git", "-C", str(self._repo), "cat-file", "--batch-command"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=self._env,
            )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        return self._proc.stdin, self._proc.stdout

    def read_entries(self, entries: Sequence[Entry]) -> list[bytes]:
        """Contents of many blobs, streamed: requests go out a chunk at a time, answers are read
        in order, so neither pipe can fill while the other side waits."""
        out: list[bytes] = []
        for start in range(0, len(entries), _CHUNK):
            chunk = [(e.oid or "", e.path) for e in entries[start : start + _CHUNK]]
            out.extend(self._request(chunk))
        return out

    def reader(self, oid: str, path: str) -> Reader:
        return lambda: self._request([(oid, path)])[0]

    def _request(self, wanted: list[tuple[str, str]]) -> list[bytes]:
        """One round trip for (oid, path) pairs; any failure names the path it was reading."""
        out: list[bytes] = []
        try:
            with self._lock:
                stdin, stdout = self._pipes()
                stdin.write(b"".join(f"contents {oid}\n".encode() for oid, _ in wanted))
                stdin.flush()
                for oid, _ in wanted:
                    size = self._header_size(stdout.readline(), oid)
                    data = stdout.read(size)
                    stdout.read(1)  # the newline after the content
                    if len(data) != size:
                        raise UnreadableEntryError(f"object {oid} was cut short")
                    out.append(data)
        except (OSError, UnreadableEntryError) as exc:
            failed = wanted[min(len(out), len(wanted) - 1)][1]  # the one being read
            raise UnreadableEntryError(f"cannot read {display_path(failed)}: {exc}") from None
        return out

    @staticmethod
    def _header_size(header: bytes, oid: str) -> int:
        parts = header.split()
        if len(parts) == 3:
            return int(parts[2])
        if len(parts) == 2 and parts[1] == b"missing":
            raise UnreadableEntryError(f"object {oid} is missing from the repository")
        raise UnreadableEntryError(f"git cat-file gave no answer for object {oid}")

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        assert proc.stdin is not None and proc.stdout is not None
        with contextlib.suppress(OSError):  # the process may already have gone
            proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
