"""Reading a branch's tip from a tree source: the one place a job fetches a branch and reads
``.ichor.yaml`` at a commit (the check, the command jobs and the change engine all do)."""

from __future__ import annotations

from bot.checks.trees import TreeSource
from bot.config.schema import ConfigResult, load_config
from bot.errors import GitStoreError
from bot.forges.base import GitCredentials
from bot.gate.policy import CONFIG_FILE


def branch_tip(
    tree: TreeSource, credentials: GitCredentials | None, branch: str, *, named: str = "branch"
) -> str:
    """Fetch ``branch`` and return its tip; ``named`` is what an error calls it."""
    ref = f"refs/heads/{branch}"
    tree.fetch(credentials, [ref])
    tip = tree.fetched_ref(ref)
    if tip is None:
        raise GitStoreError(f"the {named} {branch!r} could not be fetched")
    return tip


def config_at(tree: TreeSource, credentials: GitCredentials | None, rev: str) -> ConfigResult:
    """``.ichor.yaml`` as the commit ``rev`` has it (fetching only that blob)."""
    tree.prefetch_blobs(credentials, rev, [CONFIG_FILE])
    snapshot = tree.repository().snapshot(rev, [CONFIG_FILE])
    try:
        return load_config(snapshot)
    finally:
        snapshot.close()
