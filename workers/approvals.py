"""``/approve`` and ``/approve cancel``: record or withdraw an approval, in Redis and in the
bot's reply, then let the check run again (the command job re-checks once at the end)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from bot.approvals.fingerprints import fingerprints
from bot.approvals.model import Approval
from bot.approvals.seen import approval_scope, seen_by
from bot.checks.approvals import load_approvals
from bot.checks.evaluate import evaluate_head
from bot.commands import approval_replies
from workers.services import check_services

if TYPE_CHECKING:
    from workers.commands import CommandRun


async def approve_head(run: CommandRun) -> None:
    request = run.head_request("approve")
    forge = run.adapter.forge
    services = check_services(run.context, run.adapter, run.forge, resume=False)
    evaluated = await evaluate_head(request, services)
    objects = evaluated[1].objects if evaluated is not None else ()
    if not objects:
        run.sections.append(approval_replies.nothing_to_approve(request.head_sha))
        run.audit("approve", "refused: nothing waits for approval")
        return
    # Only what the approver could have seen: the head may have moved since the comment.
    if run.asked is None:
        run.sections.append(approval_replies.comment_time_unknown(request.head_sha))
        run.audit("approve", "refused: the comment's time is not known")
        return
    shown = await asyncio.to_thread(run.context.state.shown.shown, run.pull_key)
    if shown is None:
        run.sections.append(approval_replies.no_record_of_checks(request.head_sha))
        run.audit("approve", "refused: no record of what the checks showed")
        run.recheck = True
        return
    scope = approval_scope(objects, seen_by(run.asked, shown))
    if not scope.covered:
        run.sections.append(
            approval_replies.nothing_seen(request.head_sha, scope.unseen, run.asked)
        )
        run.audit("approve", "refused: no object it covers was shown before it")
        return
    store = run.context.state.approvals
    # Rebuilt from the forge first when Redis has lost them, so recording one keeps the rest.
    await load_approvals(forge, store, run.repo, run.number, run.pull_key)
    approval = Approval(
        run.actor,
        request.head_sha,
        fingerprints(o.object for o in scope.covered),
        source=run.source,
    )
    await asyncio.to_thread(store.record, run.pull_key, approval)
    run.sections.append(approval_replies.approved(approval, scope.covered))
    if scope.unseen:
        run.sections.append(approval_replies.not_covered(scope.unseen, run.asked))
    run.recheck = True
    unseen = f"; {len(scope.unseen)} shown later not covered" if scope.unseen else ""
    run.audit("approve", "done" + unseen)


async def withdraw_approval(run: CommandRun) -> None:
    store = run.context.state.approvals
    forge = run.adapter.forge
    await load_approvals(forge, store, run.repo, run.number, run.pull_key)
    removed = await asyncio.to_thread(store.withdraw, run.pull_key, run.actor)
    if removed is None:
        run.sections.append(approval_replies.nothing_to_withdraw(run.actor))
        run.audit("approve", "refused: no approval to withdraw")
        return
    run.sections.append(approval_replies.withdrawn(run.actor, run.source))
    run.recheck = True
    run.audit("approve", "done: withdrawn")
