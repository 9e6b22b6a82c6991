"""``.ichor.yaml`` as the base branch has it now: what a command's permissions come from.

A pull request cannot loosen its own rules, so commands read the configuration of the branch
it merges into, at that branch's tip, fetched into the same mirror the checks use.
"""

from __future__ import annotations

from bot.checks.tips import branch_tip, config_at
from bot.checks.trees import TreeSource
from bot.config.schema import ConfigResult
from bot.errors import PermanentForgeError
from bot.forges.base import GitCredentials, PullRequestRef
from bot.repos import RepoRef
from workers.context import Adapter


def read_base_config(adapter: Adapter, repo: RepoRef, pull: PullRequestRef) -> ConfigResult:
    if pull.base_ref is None:
        raise PermanentForgeError(f"{repo.full_name}#{pull.number}: the base branch is not known")
    credentials = adapter.forge.git_credentials(repo)
    with adapter.open_tree(repo) as tree:
        return _config_at_tip(tree, credentials, pull.base_ref)


def _config_at_tip(
    tree: TreeSource, credentials: GitCredentials | None, branch: str
) -> ConfigResult:
    tip = branch_tip(tree, credentials, branch, named="base branch")
    return config_at(tree, credentials, tip)
