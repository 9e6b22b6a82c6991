"""Approvals in a merge group's check (design.md 5.1): what was approved on the pull requests
the group queues carries over to the objects the group leaves unchanged.

Nobody can ``/approve`` a merge group, so a strict target's new object approved on none of the
group's pull requests, or changed since it was, fails the group's check rather than waiting.
Each pull request's approvals are read as its own check reads them (the store, else the bot's
reply markers) and counted as its own check counts them (its author's own only when the
configuration allows). Reading them never fails the check: a pull request whose approvals or
author cannot be read contributes none, so its objects fail the group, and the log says why.
"""

from __future__ import annotations

import dataclasses
import logging

from bot.approvals.approval import Approval
from bot.approvals.pending import approval_status, counts_for
from bot.checks.approvals import StrictObjects, load_approvals
from bot.checks.compare import CheckComparison
from bot.checks.request import QueuedGroup
from bot.errors import ForgeError
from bot.forges.base import ForgeAdapter
from bot.repos import RepoRef
from bot.state.base import ApprovalStore, pull_key

log = logging.getLogger("ichor.check")


def with_group_approvals(
    comparison: CheckComparison,
    strict: StrictObjects,
    repo: RepoRef,
    group: QueuedGroup,
    forge: ForgeAdapter,
    store: ApprovalStore | None,
) -> CheckComparison:
    """``comparison`` as a merge group's, with the approval status of its strict new objects
    by the approvals given on the group's pull requests."""
    comparison = dataclasses.replace(comparison, queued=group.pulls)
    if not strict.objects:
        return comparison
    approvals: list[Approval] = []
    for number in group.pulls:
        pull = pull_key(group.forge, repo.full_name, number)
        approvals += _counted(forge, store, repo, number, pull, strict.allow_author_approval)
    status = approval_status(strict.objects, approvals, pr_author=None, allow_author_approval=True)
    return dataclasses.replace(comparison, approvals=status)


def _counted(
    forge: ForgeAdapter,
    store: ApprovalStore | None,
    repo: RepoRef,
    number: int,
    pull: str,
    allow_author_approval: bool,
) -> list[Approval]:
    """The approvals of pull request ``number`` (filed under ``pull``) that count on it."""
    found = load_approvals(forge, store, repo, number, pull)
    if not found:
        return []
    author: str | None = None
    if not allow_author_approval:
        try:
            author = forge.get_pull_request(repo, number).author
        except ForgeError as exc:
            log.warning(
                "%s#%d: its author could not be read, so its approvals do not count in the "
                "merge group: %s",
                repo.full_name,
                number,
                exc,
            )
            return []
        if not author:
            log.warning("%s#%d: no author known, no approval counts", repo.full_name, number)
            return []
    return [
        a
        for a in found
        if counts_for(a, pr_author=author, allow_author_approval=allow_author_approval)
    ]
