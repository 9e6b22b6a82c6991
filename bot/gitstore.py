"""One bare, blob-less mirror per repository, fetched by exact refs and object ids.

A mirror is a partial clone (``--filter=blob:none``): commits and trees arrive with every fetch,
blobs only when :meth:`Mirror.prefetch_blobs` asks for them, in one request. Local commands run
with every transport forbidden, so git can never lazily fetch a missing object behind our back
(one request per blob, and without credentials). The credential reaches git only through the
environment, as an ``http.<base>/.extraHeader`` scoped to the forge's own base URL.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from bot.errors import GitStoreError, PermanentForgeError, SnapshotError, TransientForgeError
from bot.forges.base import GitCredentials, RepoHandle
from bot.git_snapshot import GitRepository, git_environment

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_SAFE_NAME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
# No userinfo, query, fragment, escapes (a %2e%2e segment) or quoting trouble.
_BAD_URL = re.compile(r"[\x00-\x20\x7f\\\"'<>`{}|^?#@%]")
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|/\.|\.lock(/|$)|[/.]$")
_DEFAULT_PORT = {"http": 80, "https": 443}
# Environment that would make git print request headers, or ask someone for a password.
_DROPPED_ENV = ("GIT_ASKPASS", "SSH_ASKPASS", "GIT_CURL_VERBOSE", "GIT_CONFIG_COUNT")
_DROPPED_PREFIXES = ("GIT_TRACE", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
_PROTOCOLS = ("http", "https", "file", "ssh", "git", "ext")
_HTTP_STATUS = re.compile(r"returned error: (\d{3})")
_PERMANENT = re.compile(
    r"not our ref|couldn't find remote ref|authentication failed|could not read (username|pass)"
    r"|terminal prompts disabled|not found|not allowed"
)
_TRANSIENT = re.compile(
    r"could not resolve|connection (refused|reset)|timed out|early eof|rpc failed|hung up"
    r"|failed to connect|unexpected disconnect|operation too slow|empty reply|transfer closed"
)


class GitStore:
    """Mirrors under ``root/mirrors``, their locks under ``root/locks``."""

    def __init__(self, root: Path, *, allowed_base_url: str, timeout: float = 300.0) -> None:
        base = urlsplit(allowed_base_url)
        if base.scheme not in _DEFAULT_PORT or not base.hostname or _BAD_URL.search(base.netloc):
            raise ValueError(f"allowed_base_url must be a plain http(s) URL: {allowed_base_url!r}")
        self.root = Path(root)
        self.timeout = timeout
        self._scheme, self._host = base.scheme, base.hostname.lower()
        self._port = base.port or _DEFAULT_PORT[base.scheme]
        self._path = base.path.rstrip("/")
        self.base_url = f"{base.scheme}://{base.netloc.lower()}{self._path}/"

    def check_clone_url(self, url: str) -> None:
        """Refuse (:class:`PermanentForgeError`) any URL that is not on the allowed base."""
        parts = urlsplit(url)
        try:
            port = parts.port or _DEFAULT_PORT.get(parts.scheme)
        except ValueError:
            port = None
        accepted = (
            parts.scheme == self._scheme
            and not _BAD_URL.search(url.partition("://")[2])
            and (parts.hostname or "").lower() == self._host
            and port == self._port
            and parts.path.startswith(self._path + "/")
            and parts.path.strip("/") != self._path.strip("/")
            and not {".", ".."} & set(parts.path.split("/"))
        )
        if not accepted:
            raise PermanentForgeError(f"refusing clone URL {url!r}: not under {self.base_url}")

    def check_credentials(self, credentials: GitCredentials | None) -> None:
        if credentials is None:
            return
        allowed = {f"{self._host}:{self._port}"}
        if self._port == _DEFAULT_PORT[self._scheme]:
            allowed.add(self._host)
        if credentials.host.lower() not in allowed:
            raise PermanentForgeError(
                f"credentials for {credentials.host!r} do not belong to {self.base_url}"
            )
        if "\n" in credentials.header or "\r" in credentials.header:
            raise PermanentForgeError("refusing a credential header that spans lines")

    @contextlib.contextmanager
    def open(self, repo: RepoHandle) -> Iterator[Mirror]:
        """The repository's mirror, created if needed, locked against every other job."""
        self.check_clone_url(repo.clone_url)  # before any file or process
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
            mirror = Mirror(self, path, repo.clone_url)
            mirror.prepare()
            yield mirror
        finally:
            if mirror is not None:
                mirror.closed = True
            os.close(fd)  # releases the lock

    def local_env(self) -> dict[str, str]:
        """For commands that must never touch the network (a lazy fetch fails at once)."""
        never = [(f"protocol.{p}.allow", "never") for p in _PROTOCOLS]
        return _env([("protocol.allow", "never"), *never, ("core.hooksPath", os.devnull)])

    def network_env(self, credentials: GitCredentials | None) -> dict[str, str]:
        self.check_credentials(credentials)
        config = [
            ("protocol.allow", "never"),
            (f"protocol.{self._scheme}.allow", "always"),
            ("protocol.version", "2"),
            ("credential.helper", ""),
            ("core.askPass", ""),
            ("core.hooksPath", os.devnull),
            # A redirect would make git send the header to wherever it points next.
            ("http.followRedirects", "false"),
        ]
        if credentials is not None:
            config.append((f"http.{self.base_url}.extraHeader", credentials.header))
        return _env(config)


class Mirror:
    """A locked mirror; valid only inside :meth:`GitStore.open`."""

    def __init__(self, store: GitStore, path: Path, clone_url: str) -> None:
        self.path = path
        self.clone_url = clone_url
        self.closed = False
        self._store = store

    def prepare(self) -> None:
        if not self.path.exists():
            self._create()
            return
        current = self._git(["config", "--get", "remote.origin.url"], check=False).strip()
        if current.decode("utf-8", "replace") != self.clone_url:  # renamed repository
            self._git(["config", "remote.origin.url", self.clone_url])

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
        if self._missing_commits([commit]):
            raise GitStoreError(f"commit {commit} is not in the mirror: fetch it first")
        tips = self._path_objects(commit, paths)
        missing = self._missing_objects(tips)
        if not missing:
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
        code, out, err = _communicate(["git", *args], env, stdin, self._store.timeout)
        if code is None:
            raise GitStoreError(f"git {_verb(args)} timed out in {self.path}")
        if check and code != 0:
            raise GitStoreError(f"git {_verb(args)} failed in {self.path}: {_first_line(err)}")
        return out

    def _network(
        self,
        args: list[str],
        env: dict[str, str],
        credentials: GitCredentials | None,
        stdin: bytes | None = None,
    ) -> None:
        argv = ["git", "-C", str(self.path), *args]
        code, _, err = _communicate(argv, env, stdin, self._store.timeout)
        secrets = _secrets(credentials)
        where = f"fetching from {self.clone_url}"
        if code is None:
            raise TransientForgeError(f"git fetch timed out after {self._store.timeout:g}s {where}")
        if code == 0:
            return
        text = _scrub(err.decode("utf-8", "replace"), secrets)
        message = f"git fetch failed {where}: {_first_line(text.encode())}"
        lowered = text.lower()
        status = _HTTP_STATUS.search(lowered)
        if status and (status.group(1).startswith("5") or status.group(1) in ("408", "429")):
            raise TransientForgeError(message)
        if status or _PERMANENT.search(lowered):
            raise PermanentForgeError(message)
        if _TRANSIENT.search(lowered):
            raise TransientForgeError(message)
        raise GitStoreError(message)


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


def _communicate(
    argv: list[str], env: dict[str, str], stdin: bytes | None, timeout: float
) -> tuple[int | None, bytes, bytes]:
    """Exit code (None on timeout, after killing git and its helpers), stdout, stderr."""
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # one process group: a timeout kills remote-https too
        )
    except OSError as exc:
        raise GitStoreError(f"cannot run git: {exc}") from None
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, b"", b""
    return proc.returncode, out, err


def _env(config: list[tuple[str, str]]) -> dict[str, str]:
    env = {
        k: v
        for k, v in git_environment().items()
        if k not in _DROPPED_ENV and not k.startswith(_DROPPED_PREFIXES)
    }
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_LITERAL_PATHSPECS": "1"})
    env["GIT_CONFIG_COUNT"] = str(len(config))
    for i, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def _secrets(credentials: GitCredentials | None) -> list[str]:
    """Every form of the credential that could show up in a message, longest first."""
    if credentials is None:
        return []
    header = credentials.header
    value = header.partition(":")[2].strip()
    scheme, _, param = value.partition(" ")
    found = {header, value, param.strip()}
    tokens = {param.strip()}
    if scheme.lower() == "basic":
        with contextlib.suppress(binascii.Error, UnicodeDecodeError):
            decoded = base64.b64decode(param.strip(), validate=True).decode()
            found.add(decoded)
            tokens = {decoded.partition(":")[2]}
    for token in tokens:
        found.add(token)
        for user in ("x-access-token", "oauth2", "git", "token"):
            found.add(base64.b64encode(f"{user}:{token}".encode()).decode())
    return sorted((s for s in found if len(s) >= 4), key=len, reverse=True)


def _scrub(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "<redacted>")
    return text


def _first_line(stderr: bytes) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line.removeprefix("fatal: ").removeprefix("error: ")
    return lines[0] if lines else "git failed without a message"


def _verb(args: list[str]) -> str:
    return next((a for a in args if not a.startswith("-") and "/" not in a), "git")


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
