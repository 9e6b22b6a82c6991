"""Talking to the forge's git server without leaking what lets us in.

The token reaches git only through the environment (``GIT_CONFIG_*``), as an
``http.<base>/.extraHeader`` scoped to the forge's own base URL: never on a command line, in a
config file, or in a URL, and only for clone URLs under that base. Helpers that could print it
or ask for another one are switched off. Error messages never carry it: whatever git wrote is
scrubbed of every form the credential could take before it becomes a :class:`ForgeError`.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from urllib.parse import urlsplit

from bot.errors import GitStoreError, IchorError, PermanentForgeError, TransientForgeError
from bot.forges.base import GitCredentials
from bot.forges.http.redaction import header_forms, scrub, secrets_list
from bot.git.repository import git_environment

# No userinfo, query, fragment, escapes (a %2e%2e segment) or quoting trouble.
_BAD_URL = re.compile(r"[\x00-\x20\x7f\\\"'<>`{}|^?#@%]")
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


class ForgeRemote:
    """The one forge base URL git may talk to, and who may be sent there."""

    def __init__(self, allowed_base_url: str) -> None:
        base = urlsplit(allowed_base_url)
        if base.scheme not in _DEFAULT_PORT or not base.hostname or _BAD_URL.search(base.netloc):
            raise ValueError(f"allowed_base_url must be a plain http(s) URL: {allowed_base_url!r}")
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

    def network_env(self, credentials: GitCredentials | None) -> dict[str, str]:
        """For a fetch from this forge: its scheme only, the header scoped to its base URL."""
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


def local_env() -> dict[str, str]:
    """For commands that must never touch the network (a lazy fetch fails at once)."""
    never = [(f"protocol.{p}.allow", "never") for p in _PROTOCOLS]
    return _env([("protocol.allow", "never"), *never, ("core.hooksPath", os.devnull)])


def run_local(
    args: list[str],
    env: dict[str, str],
    *,
    timeout: float,
    where: str,
    check: bool = True,
    stdin: bytes | None = None,
) -> bytes:
    """``git *args``'s stdout; a :class:`GitStoreError` naming ``where`` if it fails."""
    code, out, err = _communicate(["git", *args], env, stdin, timeout)
    if code is None:
        raise GitStoreError(f"git {_verb(args)} timed out in {where}")
    if check and code != 0:
        raise GitStoreError(f"git {_verb(args)} failed in {where}: {_first_line(err)}")
    return out


def run_fetch(
    args: list[str],
    env: dict[str, str],
    credentials: GitCredentials | None,
    *,
    timeout: float,
    where: str,
    stdin: bytes | None = None,
) -> None:
    """Run ``git *args`` against the forge; classify a failure, the credential scrubbed out.

    A timeout, 5xx/408/429 or network trouble is a :class:`TransientForgeError`; any other HTTP
    status, a missing ref or refused authentication a :class:`PermanentForgeError`; anything
    else a :class:`GitStoreError`.
    """
    result = run_remote(
        args, env, credentials, action="fetch", timeout=timeout, where=where, stdin=stdin
    )
    if result.code != 0:
        raise remote_failure("fetch", where, result.err)


@dataclass(frozen=True, slots=True)
class RemoteResult:
    """A finished git command that talked to the forge; both texts already scrubbed."""

    code: int
    out: str
    err: str


def run_remote(
    args: list[str],
    env: dict[str, str],
    credentials: GitCredentials | None,
    *,
    action: str,
    timeout: float,
    where: str,
    stdin: bytes | None = None,
) -> RemoteResult:
    """Run ``git *args`` (a ``git <action>``) against the forge; a timeout is a
    :class:`TransientForgeError`."""
    code, out, err = _communicate(["git", *args], env, stdin, timeout)
    if code is None:
        raise TransientForgeError(f"git {action} timed out after {timeout:g}s {where}")
    secrets = _secrets(credentials)
    return RemoteResult(
        code,
        scrub(out.decode("utf-8", "replace"), secrets),
        scrub(err.decode("utf-8", "replace"), secrets),
    )


def remote_failure(action: str, where: str, err: str) -> IchorError:
    """What a failed ``git <action>`` means, from its (scrubbed) stderr; see :func:`run_fetch`."""
    message = f"git {action} failed {where}: {_first_line(err.encode())}"
    lowered = err.lower()
    status = _HTTP_STATUS.search(lowered)
    if status and (status.group(1).startswith("5") or status.group(1) in ("408", "429")):
        return TransientForgeError(message)
    if status or _PERMANENT.search(lowered):
        return PermanentForgeError(message)
    if _TRANSIENT.search(lowered):
        return TransientForgeError(message)
    return GitStoreError(message)


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
    return list(secrets_list(header_forms(credentials.header)))


_scrub = scrub  # the shared redaction; bot.git.store (and its tests) reach it by this name


def _first_line(stderr: bytes) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line.removeprefix("fatal: ").removeprefix("error: ")
    return lines[0] if lines else "git failed without a message"


def _verb(args: list[str]) -> str:
    return next((a for a in args if not a.startswith("-") and "/" not in a), "git")
