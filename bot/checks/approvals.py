"""Approvals in a pull request's check (design.md 5.1): the strict targets' new objects, and which
of them the approvals given on the pull request cover.

Approvals come from the approval store; when it has no record for the pull request (Redis lost
it, or none was ever kept) they are rebuilt from the markers in the bot's own reply comments
and restored into the store. Reading them never fails a check: a store or forge that cannot
answer is logged and counts as no approvals, so the objects wait.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from datetime import datetime

from bot.approvals.approval import Approval
from bot.approvals.marker import approvals_from_comments
from bot.approvals.pending import NewObject, approval_status, strict_new_objects
from bot.approvals.seen import ShownCheck
from bot.checks.compare import CheckComparison
from bot.checks.request import CheckRequest
from bot.errors import ForgeError
from bot.forges.base import ForgeAdapter
from bot.gate.policy import GatePolicy
from bot.gate.report import Report
from bot.repos import RepoRef
from bot.state.base import ApprovalStore, ShownChecks

log = logging.getLogger("ichor.check")


@dataclass(frozen=True, slots=True)
class StrictObjects:
    """What the gate found that needs approval, and the rule for the author's own."""

    objects: tuple[NewObject, ...] = ()
    allow_author_approval: bool = False


def strict_objects(
    policy: GatePolicy, head: Report, base: Report | None, *, allow_author_approval: bool
) -> StrictObjects:
    modes = {t.name: t.mode for t in policy.targets}
    return StrictObjects(strict_new_objects(head, base, modes), allow_author_approval)


def with_approvals(
    comparison: CheckComparison,
    strict: StrictObjects,
    request: CheckRequest,
    forge: ForgeAdapter,
    store: ApprovalStore | None,
) -> CheckComparison:
    """``comparison`` with its approval status, for a pull request with strict new objects."""
    if not strict.objects or request.number is None or request.pull is None:
        return comparison  # nothing to approve, or no pull request to approve it on
    approvals = load_approvals(forge, store, request.repo, request.number, request.pull)
    status = approval_status(
        strict.objects,
        approvals,
        pr_author=request.author,
        allow_author_approval=strict.allow_author_approval,
    )
    return dataclasses.replace(comparison, approvals=status)


def load_approvals(
    forge: ForgeAdapter, store: ApprovalStore | None, repo: RepoRef, number: int, pull: str
) -> tuple[Approval, ...]:
    """The approvals given on pull request ``number`` (``pull`` is its store key), oldest first."""
    readable = store is not None
    if store is not None:
        try:
            found = store.approvals(pull)
        except Exception as exc:  # the forge still has them: rebuild, and leave the store be
            log.warning("%s: approvals could not be read from the store: %s", pull, exc)
            readable = False
        else:
            if found is not None:
                return found
    try:
        comments = forge.list_comments(repo, number)
        login = forge.bot_login(repo)
        rebuilt = approvals_from_comments(comments, login)
    except ForgeError as exc:  # a check must complete without them: the objects then wait
        log.warning("%s: approvals could not be rebuilt from the comments: %s", pull, exc)
        return ()
    except Exception:  # a bug here, too, must not cost the verdict
        log.exception("%s: approvals could not be rebuilt from the comments", pull)
        return ()
    if store is not None and readable:
        try:
            store.restore(pull, rebuilt)
        except Exception as exc:
            log.warning("%s: rebuilt approvals could not be stored: %s", pull, exc)
    return rebuilt


def remember_shown(
    store: ShownChecks | None, now: datetime, request: CheckRequest, comparison: CheckComparison
) -> None:
    """What a check just published showed waiting, stamped ``now``, after the forge took it (so
    no earlier than anyone could see it). A store that fails costs no verdict: an ``/approve``
    then finds no record and says so."""
    if store is None or request.pull is None:
        return
    status = comparison.approvals
    waiting = () if status is None else status.waiting
    shown = ShownCheck(request.head_sha, now, frozenset(o.fingerprint for o in waiting))
    try:
        store.record_shown(request.pull, shown)
    except Exception as exc:
        log.warning("%s: what the check showed could not be recorded: %s", request.pull, exc)
