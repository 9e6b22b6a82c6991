"""One bare, blob-less mirror per repository, fetched by exact refs and object ids.

A mirror is a partial clone (``--filter=blob:none``): commits and trees arrive with every fetch,
blobs only when :meth:`Mirror.prefetch_blobs` asks for them, in one request. Local commands run
with every transport forbidden, so git can never lazily fetch a missing object behind our back
(one request per blob, and without credentials). How git reaches the forge (which URLs, which
environment, what a failure means) is :mod:`bot.git.transport`'s business.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from bot.errors import GitStoreError, PermanentForgeError, SnapshotError
from bot.forges.base import GitCredentials
from bot.git.repository import GitRepository
from bot.git.transport import ForgeRemote, local_env, run_fetch, run_local

# Re-exported: the tests check the scrubbing through this module.
from bot.git.transport import _scrub as _scrub
from bot.git.transport import _secrets as _secrets
from bot.repos import RepoRef

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_SAFE_NAME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|/\.|\.lock(/|$)|[/.]$")


class GitStore:
    """Mirrors under ``root/mirrors``, their locks under ``root/locks``."""

    def __init__(self, root: Path, *, allowed_base_url: str, timeout: float = 300.0) -> None:
        self.root = Path(root)
        self.timeout = timeout
        self._remote = ForgeRemote(allowed_base_url)  # ValueError unless a plain http(s) URL
        self.base_url = self._remote.base_url
        # (mirror, commit, paths) whose blobs are all here: nothing is ever pruned from a mirror
        # (auto-gc is off), so a base checked once needs no listing on the next push.
        self._complete: set[tuple[str, str, tuple[str, ...]]] = set()
        self._complete_lock = threading.Lock()

    def is_complete(self, key: tuple[str, str, tuple[str, ...]]) -> bool:
        with self._complete_lock:
            return key in self._complete

    def mark_complete(self, key: tuple[str, str, tuple[str, ...]]) -> None:
        with self._complete_lock:
            if len(self._complete) > 100_000:  # a bound for a worker that runs for months
                self._complete.clear()
            self._complete.add(key)

    def check_clone_url(self, url: str) -> None:
        """Refuse (:class:`PermanentForgeError`) any URL that is not on the allowed base."""
        self._remote.check_clone_url(url)

    def check_credentials(self, credentials: GitCredentials | None) -> None:
        self._remote.check_credentials(credentials)

    @contextlib.contextmanager
    def open(self, repo: RepoRef) -> Iterator[Mirror]:
        """The repository's mirror, created if needed, locked against every other job."""
        self.check_clone_url(repo.git_url)  # before any file or process
        name = _file_name(repo.full_name)
        forge = _file_name(repo.forge)
        path = self.root / "mirrors" / forge / f"{name}.git"
        lock_path = self.root / "locks" / forge / f"{name}.lock"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            lock_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise GitStoreError(f"cannot prepare the mirror of {repo.full_name}: {exc}") from None
        mirror: Mirror | None = None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            mirror = Mirror(self, path, repo.git_url)
            mirror.prepare()
            yield mirror
        finally:
            if mirror is not None:
                mirror.closed = True
            os.close(fd)  # releases the lock

    def local_env(self) -> dict[str, str]:
        """For commands that must never touch the network (a lazy fetch fails at once)."""
        return local_env()

    def network_env(self, credentials: GitCredentials | None) -> dict[str, str]:
        return self._remote.network_env(credentials)


class Mirror:
    """A locked mirror; valid only inside :meth:`GitStore.open`."""

    def __init__(self, store: GitStore, path: Path, clone_url: str) -> None:
        self.path = path
        self.clone_url = clone_url
        self.closed = False
        self.identity = ""  # set by prepare()
        self._store = store

    def prepare(self) -> None:
        if not self.path.exists():
            self._create()
        self.identity = self._identity()
        current = self._git(["config", "--get", "remote.origin.url"], check=False).strip()
        if current.decode("utf-8", "replace") != self.clone_url:  # renamed repository
            self._git(["config", "remote.origin.url", self.clone_url])

    def _identity(self) -> str:
        """A name for this very mirror, so what is remembered about one that was wiped and made
        anew (same path, even the same inodes) is not believed of the new one."""
        marker = self.path / "ichor-mirror-id"
        try:
            return marker.read_text(encoding="ascii").strip()
        except OSError:
            identity = uuid.uuid4().hex
            marker.write_text(identity, encoding="ascii")
            return identity

    def _create(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")  # stale from a crash: we hold the lock
        shutil.rmtree(tmp, ignore_errors=True)
        self._run(["init", "--bare", "--quiet", "--template=", str(tmp)], self._store.local_env())
        for key, value in (
            ("core.repositoryformatversion", "1"),
            ("extensions.partialClone", "origin"),
            ("remote.origin.url", self.clone_url),
            ("remote.origin.promisor", "true"),
            ("remote.origin.partialclonefilter", "blob:none"),
            ("gc.auto", "0"),
            ("maintenance.auto", "false"),
            ("fetch.writeCommitGraph", "false"),
            ("core.logAllRefUpdates", "false"),
        ):
            self._run(["-C", str(tmp), "config", key, value], self._store.local_env())
        try:
            os.rename(tmp, self.path)
        except OSError as exc:
            raise GitStoreError(f"cannot create mirror {self.path}: {exc}") from None

    def fetch(
        self, credentials: GitCredentials | None, refs: Sequence[str], *, want: Sequence[str] = ()
    ) -> None:
        """Make sure every commit in ``want`` is here; fetch ``refs`` unless they already are.

        Each ref lands at ``refs/ichor/<ref without refs/>``, force-updated. A wanted commit
        the refs did not bring is then fetched by id, still from the mirror's own origin.
        """
        self._check_open()
        wanted = [_oid(w) for w in want]
        refspecs = [f"+{r}:refs/ichor/{_ref(r).removeprefix('refs/')}" for r in refs]
        env = self._store.network_env(credentials)
        missing = self._missing_commits(wanted)
        if wanted and not missing:
            return
        if refspecs:
            try:
                self._network(["fetch", *_FETCH_FLAGS, "origin", *refspecs], env, credentials)
            except PermanentForgeError as exc:
                if not (missing and "couldn't find remote ref" in str(exc)):
                    raise  # a vanished ref may still leave its commit fetchable by id
            missing = self._missing_commits(missing)
        if not missing:
            return
        stdin = "".join(f"{oid}\n" for oid in missing).encode()
        try:
            self._network(["fetch", *_FETCH_FLAGS, "--stdin", "origin"], env, credentials, stdin)
        except PermanentForgeError as exc:
            if "not our ref" not in str(exc) and "remote ref" not in str(exc):
                raise
        missing = self._missing_commits(missing)
        if missing:
            raise GitStoreError(
                f"commit {', '.join(missing)} not found in {self.clone_url} (fetched {refs!r})"
            )

    def prefetch_blobs(
        self, credentials: GitCredentials | None, commit: str, paths: Sequence[str]
    ) -> int:
        """Fetch, in one request, every blob under ``paths`` at ``commit`` not yet here.

        ``paths`` are repo-relative directories or files, ``""`` the whole tree; one that does
        not exist at ``commit`` is skipped, as are submodules. Returns how many blobs came.
        """
        self._check_open()
        commit = _oid(commit)
        env = self._store.network_env(credentials)
        key = (self.identity, commit, tuple(sorted(set(paths))))
        if self._store.is_complete(key):
            return 0
        if self._missing_commits([commit]):
            raise GitStoreError(f"commit {commit} is not in the mirror: fetch it first")
        tips = self._path_objects(commit, paths)
        missing = self._missing_objects(tips)
        if not missing:
            self._store.mark_complete(key)
            return 0
        stdin = "".join(f"{oid}\n" for oid in missing).encode()
        # What git's own lazy fetch runs, for all the blobs at once; no history to negotiate.
        args = ["-c", "fetch.negotiationAlgorithm=noop", "fetch", *_FETCH_FLAGS, "--stdin"]
        self._network([*args, "origin"], env, credentials, stdin)
        still = self._missing_objects(tips)
        if still:
            raise GitStoreError(
                f"{len(still)} blob(s) still missing after the fetch, e.g. {sorted(still)[0]}"
            )
        self._store.mark_complete(key)
        return len(missing)

    def changed_paths(self, base: str, head: str) -> list[str]:
        """Paths that differ between two commits (trees only: no blob is read or fetched)."""
        self._check_open()
        try:
            return self.repository().changed_paths(_rev(base), _rev(head))
        except SnapshotError as exc:
            raise GitStoreError(str(exc)) from None

    def fetched_ref(self, ref: str) -> str | None:
        """Where a ref fetched by :meth:`fetch` points (``refs/heads/main`` is kept at
        ``refs/ichor/heads/main``); None when it was not fetched."""
        self._check_open()
        try:
            return self.repository().resolve(f"refs/ichor/{_ref(ref).removeprefix('refs/')}")
        except SnapshotError:
            return None

    def git(
        self,
        args: Sequence[str],
        *,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> bytes:
        """``git *args`` in the mirror with every transport forbidden (no lazy fetch);
        ``env`` adds variables (an index file, an author), never a credential."""
        self._check_open()
        return run_local(
            ["-C", str(self.path), *args],
            {**self._store.local_env(), **(env or {})},
            timeout=self._store.timeout,
            where=str(self.path),
            stdin=stdin,
        )

    def network_env(self, credentials: GitCredentials | None) -> dict[str, str]:
        """The environment of a command that talks to this mirror's forge (a push)."""
        self._check_open()
        return self._store.network_env(credentials)

    @property
    def timeout(self) -> float:
        return self._store.timeout

    def repository(self) -> GitRepository:
        # Reads never fetch: whatever a check reads was prefetched, in one request.
        return GitRepository(self.path, env=self._store.local_env())

    def _path_objects(self, commit: str, paths: Sequence[str]) -> dict[str, str]:
        """Object id -> kind ("tree"/"blob") for each existing path; gitlinks left out."""
        tips: dict[str, str] = {}
        wanted: list[str] = []
        for raw in paths:
            path = raw.strip("/")
            if path and any(p in ("", ".", "..") for p in path.split("/")):
                raise GitStoreError(f"not a repository-relative path: {raw!r}")
            if not path:
                tree = self._git(["rev-parse", "--verify", f"{commit}^{{tree}}"]).strip()
                tips[tree.decode()] = "tree"
            else:
                wanted.append(path)
        for start in range(0, len(wanted), 1000):  # keep argv well below its limit
            chunk = wanted[start : start + 1000]
            out = self._git(["ls-tree", "-z", "--full-tree", commit, "--", *chunk])
            for record in out.split(b"\0"):
                meta = record.partition(b"\t")[0].split()
                if len(meta) == 3 and meta[1] in (b"tree", b"blob"):
                    tips[meta[2].decode()] = meta[1].decode()
        return tips

    def _missing_objects(self, tips: dict[str, str]) -> set[str]:
        """Objects under (or being) ``tips`` that are not here, without fetching any."""
        if not tips:
            return set()
        args = ["--objects", "--no-walk", "--no-object-names", "--ignore-missing"]
        out = self._git(
            ["rev-list", *args, "--missing=print", "--stdin"],
            stdin="".join(f"{oid}\n" for oid in tips).encode(),
        )
        present: set[str] = set()
        missing: set[str] = set()
        for line in out.decode().split():
            (missing if line.startswith("?") else present).add(line.removeprefix("?"))
        # A missing tip is skipped (--ignore-missing) rather than printed: find those too.
        missing.update(o for o, kind in tips.items() if kind == "blob" and o not in present)
        return missing

    def _missing_commits(self, oids: Sequence[str]) -> list[str]:
        """The commits of ``oids`` not here (checked locally; never fetches anything)."""
        if not oids:
            return []
        out = self._git(
            ["rev-list", "--no-walk", "--ignore-missing", "--missing=print", "--stdin"],
            stdin="".join(f"{oid}\n" for oid in oids).encode(),
        )
        present = set(out.decode().split())
        return [oid for oid in dict.fromkeys(oids) if oid not in present]

    def _check_open(self) -> None:
        if self.closed:
            raise GitStoreError(f"mirror {self.path} used outside GitStore.open()")

    def _git(self, args: list[str], *, check: bool = True, stdin: bytes | None = None) -> bytes:
        argv = ["-C", str(self.path), *args]
        return self._run(argv, self._store.local_env(), check=check, stdin=stdin)

    def _run(
        self,
        args: list[str],
        env: dict[str, str],
        *,
        check: bool = True,
        stdin: bytes | None = None,
    ) -> bytes:
        return run_local(
            args, env, timeout=self._store.timeout, where=str(self.path), check=check, stdin=stdin
        )

    def _network(
        self,
        args: list[str],
        env: dict[str, str],
        credentials: GitCredentials | None,
        stdin: bytes | None = None,
    ) -> None:
        argv = ["-C", str(self.path), *args]
        where = f"fetching from {self.clone_url}"
        timeout = self._store.timeout
        run_fetch(argv, env, credentials, timeout=timeout, where=where, stdin=stdin)


_FETCH_FLAGS = (
    "--quiet",
    "--no-tags",
    "--no-write-fetch-head",
    "--recurse-submodules=no",
    "--filter=blob:none",
    "--no-auto-gc",
    "--no-auto-maintenance",
    "--no-write-commit-graph",
    "--no-show-forced-updates",
)


def _file_name(name: str) -> str:
    """One path component that names ``name`` alone: never empty, ``.``, ``..`` or hidden."""
    if not name or name.startswith("/") or name.endswith("/") or "//" in name:
        raise PermanentForgeError(f"refusing repository name {name!r}")
    raw = name.encode("utf-8", "surrogateescape")
    out = "".join(
        chr(b) if chr(b) in _SAFE_NAME and not (i == 0 and b == ord(".")) else f"%{b:02X}"
        for i, b in enumerate(raw)
    )
    if len(out) > 160:  # file names stop at 255 bytes; keep it unique with a digest
        out = f"{out[:100]}-{hashlib.sha256(raw).hexdigest()[:40]}"
    return out


def is_ref_name(ref: str) -> bool:
    """Whether ``ref`` is a full ref name git accepts and no option or revision syntax."""
    return ref.startswith("refs/") and not _BAD_REF.search(ref)


def _oid(value: str) -> str:
    oid = value.lower()
    if not _OID.fullmatch(oid):
        raise GitStoreError(f"not a full object id: {value!r}")
    return oid


def _ref(ref: str) -> str:
    if not ref.startswith("refs/") or _BAD_REF.search(ref) or ref.startswith("refs/ichor/"):
        raise GitStoreError(f"not a ref this store fetches: {ref!r}")
    return ref


def _rev(rev: str) -> str:
    if not rev or rev.startswith("-") or any(c.isspace() or c == "\0" for c in rev):
        raise GitStoreError(f"invalid revision {rev!r}")
    return rev
