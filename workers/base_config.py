"""``.ichor.yaml`` as the base branch has it now: what a command's permissions come from, with
the forge's CODEOWNERS file at the same commit when a target's ``approvers`` name its owners.

A pull request cannot loosen its own rules, so commands read the configuration of the branch
it merges into, at that branch's tip, fetched into the same mirror the checks use.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.approvals.approvers import CODEOWNERS
from bot.approvals.codeowners import MAX_BYTES, PATHS, CodeOwners, parse_codeowners, unreadable
from bot.checks.tips import branch_tip, config_at
from bot.checks.trees import TreeSource
from bot.config.schema import ConfigResult
from bot.errors import PermanentForgeError
from bot.forges.base import GitCredentials, PullRequestRef
from bot.repos import RepoRef
from workers.context import Adapter


@dataclass(frozen=True, slots=True)
class BaseRules:
    config: ConfigResult
    owners: CodeOwners | None  # read only when a target's approvers are its code owners


def read_base_config(
    adapter: Adapter, repo: RepoRef, pull: PullRequestRef, forge: str = ""
) -> BaseRules:
    if pull.base_ref is None:
        raise PermanentForgeError(f"{repo.full_name}#{pull.number}: the base branch is not known")
    credentials = adapter.forge.git_credentials(repo)
    with adapter.open_tree(repo) as tree:
        tip = branch_tip(tree, credentials, pull.base_ref, named="base branch")
        config = config_at(tree, credentials, tip)
        wanted = config.config is not None and any(
            t.approvers == CODEOWNERS for t in config.config.targets
        )
        owners = _codeowners(tree, credentials, tip, forge) if wanted else None
        return BaseRules(config, owners)


def _codeowners(
    tree: TreeSource, credentials: GitCredentials | None, rev: str, forge: str
) -> CodeOwners:
    path = PATHS.get(forge, PATHS["github"])
    tree.prefetch_blobs(credentials, rev, [path])
    snapshot = tree.repository().snapshot(rev, [path])
    try:
        entry = snapshot.get(path)
        if entry is None:
            return unreadable(path, "the base branch has no such file")
        if entry.size > MAX_BYTES:
            return unreadable(path, f"it is over {MAX_BYTES >> 20} MB")
        return parse_codeowners(entry.read(), path)
    finally:
        snapshot.close()
