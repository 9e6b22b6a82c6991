"""One push of a commit built in the mirror, guarded by a lease on the branch it replaces.

The push goes to the mirror's own origin (a URL :class:`bot.git.store.GitStore` checked) with
the environment of a fetch: the forge's scheme only, the token as an ``http.extraHeader`` in
``GIT_CONFIG_*``, no helper, no hook. ``--force-with-lease=<ref>:<expected>`` makes the
server refuse the update unless the branch is still where it was read (absent, for
``expected=None``), so a leftover branch is replaced but a branch someone moved meanwhile
is not: that is a :class:`PushRaceError`, and the caller starts over from a new fetch.
"""

from __future__ import annotations

import re

from bot.errors import GitStoreError, PermanentForgeError
from bot.forges.base import GitCredentials
from bot.git.store import Mirror, is_ref_name
from bot.git.transport import remote_failure, run_remote

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# Why a ref update is refused when the branch is not where the lease (or the server's own
# old-value check, for a push that lost a race on the server) expected it.
_RACE = re.compile(r"stale info|cannot lock ref|incorrect old value|failed to update ref")
_PUSH_FLAGS = (
    "--porcelain",  # one tab-separated status line per ref, on stdout
    "--no-verify",
    "--no-signed",
    "--no-follow-tags",
    "--recurse-submodules=no",
)
# push.negotiate: when the base branch moved since the fetch, the remote's new tip is unknown
# here, so git would not know the server has the parent and would pack every blob of the tree
# (absent from a blob-less mirror: fetched lazily, one by one). Negotiating first finds the
# common commit. A lease that names its value needs no remote-tracking ref or reflog.
#
# pack.window=0: the pack git sends over HTTP is always thin (the helper ignores --no-thin), so
# pack-objects would read the old blobs of the paths it sends as delta bases, and a blob-less
# mirror has none of them: it would fetch each, lazily, just to compress a few small files.
# With no delta window no base is considered.
_PUSH_CONFIG = (
    *("-c", "push.negotiate=true"),
    *("-c", "push.useForceIfIncludes=false"),
    *("-c", "pack.window=0"),
)


class PushRaceError(GitStoreError):
    """The branch is not where the lease expected: someone moved it after it was read."""


def push_branch(
    mirror: Mirror,
    credentials: GitCredentials | None,
    *,
    commit: str,
    branch: str,
    expected: str | None,
) -> None:
    """Make ``refs/heads/<branch>`` on the forge point at ``commit``, if it still points at
    ``expected`` (None: only if it does not exist). One ``git push``; a lease refused is a
    :class:`PushRaceError`, a refused token a :class:`PermanentForgeError`, a 5xx or network
    trouble a :class:`TransientForgeError`; no message holds the credential."""
    ref = _branch_ref(branch)
    commit = _full_oid(commit, "commit")
    lease = "" if expected is None else _full_oid(expected, "expected value")
    try:
        mirror.git(["rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"])
    except GitStoreError:
        raise GitStoreError(f"commit {commit} is not in the mirror {mirror.path}") from None
    argv = ["-C", str(mirror.path), *_PUSH_CONFIG, "push", *_PUSH_FLAGS]
    argv += [f"--force-with-lease={ref}:{lease}", "origin", f"{commit}:{ref}"]
    where = f"pushing {branch} to {mirror.clone_url}"
    env = mirror.network_env(credentials)
    result = run_remote(argv, env, credentials, action="push", timeout=mirror.timeout, where=where)
    if result.code == 0:
        return
    status = _ref_status(result.out, ref)
    if status is not None:
        flag, summary = status
        if flag == "!" and _RACE.search(summary.lower()):
            raise PushRaceError(
                f"{branch} moved on {mirror.clone_url} since it was read "
                f"(expected {lease or 'no branch'}): {summary}"
            )
        if flag == "!":
            raise PermanentForgeError(f"git push refused {where}: {summary}")
    raise remote_failure("push", where, result.err)


def remote_branch_head(
    mirror: Mirror, credentials: GitCredentials | None, branch: str
) -> str | None:
    """Where ``refs/heads/<branch>`` points on the forge now (None: no such branch); the
    value a lease expects. Nothing is fetched: ``ls-remote`` lists refs only."""
    ref = _branch_ref(branch)
    listed = ls_remote(mirror, credentials, "--refs", ref, doing=f"listing {branch}")
    for oid, name in listed:
        if name == ref:  # the pattern also matches refs that merely end with it
            return _full_oid(oid, "remote value")
    return None


def remote_default_branch(mirror: Mirror, credentials: GitCredentials | None) -> str:
    """The branch the forge's ``HEAD`` names (the repository's default branch)."""
    for target, name in ls_remote(mirror, credentials, "--symref", "HEAD", doing="listing HEAD"):
        if name == "HEAD" and target.startswith("ref: refs/heads/"):
            return target.removeprefix("ref: refs/heads/")
    raise GitStoreError(f"{mirror.clone_url} names no default branch")


def ls_remote(
    mirror: Mirror, credentials: GitCredentials | None, option: str, pattern: str, *, doing: str
) -> list[tuple[str, str]]:
    """``git ls-remote <option> origin <pattern>`` as (value, name) pairs: refs only, nothing
    fetched."""
    argv = ["-C", str(mirror.path), "ls-remote", option, "origin", pattern]
    where = f"{doing} on {mirror.clone_url}"
    env = mirror.network_env(credentials)
    result = run_remote(
        argv, env, credentials, action="ls-remote", timeout=mirror.timeout, where=where
    )
    if result.code != 0:
        raise remote_failure("ls-remote", where, result.err)
    pairs = (line.partition("\t") for line in result.out.splitlines())
    return [(value, name) for value, _, name in pairs]


def _ref_status(porcelain: str, ref: str) -> tuple[str, str] | None:
    """(flag, summary) of ``ref``'s line in ``git push --porcelain`` output, if any."""
    for line in porcelain.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[1].rpartition(":")[2] == ref:
            return parts[0], parts[2]
    return None


def _branch_ref(branch: str) -> str:
    ref = f"refs/heads/{branch}"
    if not branch or branch.startswith(("-", "refs/")) or not is_ref_name(ref):
        raise GitStoreError(f"not a branch name to push: {branch!r}")
    return ref


def _full_oid(value: str, what: str) -> str:
    oid = value.strip().lower()
    if not _OID.fullmatch(oid):
        raise GitStoreError(f"not a full object id for the {what}: {value!r}")
    return oid
