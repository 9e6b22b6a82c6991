"""``/approve`` and ``/approve cancel``: record or withdraw an approval, in Redis and in the
bot's reply, then let the check run again (the command job re-checks once at the end)."""

from __future__ import annotations

from bot.approvals.approval import Approval
from bot.approvals.approvers import Approvers, IsMember, may_approve
from bot.approvals.fingerprints import fingerprints
from bot.approvals.seen import approval_scope, seen_by
from bot.checks.approvals import load_approvals
from bot.checks.evaluate import evaluate_head
from bot.commands import Command, approval_replies
from bot.forges.base import TeamMembership
from workers.command_run import CommandOutcome, CommandRun
from workers.services import check_services


def approve_head(run: CommandRun, command: Command) -> CommandOutcome:
    request = run.head_request("approve")
    forge = run.adapter.forge
    services = check_services(run.context, run.adapter, run.forge, resume=False)
    evaluated = evaluate_head(request, services)
    objects = evaluated[1].objects if evaluated is not None else ()
    if not objects:
        return CommandOutcome.of(
            "approve",
            "refused: nothing waits for approval",
            approval_replies.nothing_to_approve(request.head_sha),
        )
    # Only what the approver could have seen: the head may have moved since the comment.
    if run.asked is None:
        return CommandOutcome.of(
            "approve",
            "refused: the comment's time is not known",
            approval_replies.comment_time_unknown(request.head_sha),
        )
    shown = run.context.state.shown.shown(run.pull_key)
    if shown is None:
        return CommandOutcome.of(
            "approve",
            "refused: no record of what the checks showed",
            approval_replies.no_record_of_checks(request.head_sha),
            recheck=True,
        )
    scope = approval_scope(objects, seen_by(run.asked, shown))
    if not scope.covered:
        return CommandOutcome.of(
            "approve",
            "refused: no object it covers was shown before it",
            approval_replies.nothing_seen(request.head_sha, scope.unseen, run.asked),
        )
    # Only what this approver may approve: a target's approvers, or its code owners.
    split = may_approve(scope.covered, run.actor, _approvers(run), run.owners, _membership(run))
    if not split.mine:
        return CommandOutcome.of(
            "approve",
            "refused: not an approver of what waits",
            approval_replies.nothing_yours(request.head_sha, run.actor, split.not_mine),
        )
    store = run.context.state.approvals
    # Rebuilt from the forge first when Redis has lost them, so recording one keeps the rest.
    load_approvals(forge, store, run.repo, run.number, run.pull_key)
    approval = Approval(
        run.actor,
        request.head_sha,
        fingerprints(o.object for o in split.mine),
        source=run.source,
    )
    store.record(run.pull_key, approval)
    sections = [approval_replies.approved(approval, split.mine)]
    if split.not_mine:
        sections.append(approval_replies.not_yours(run.actor, split.not_mine))
    if scope.unseen:
        sections.append(approval_replies.not_covered(scope.unseen, run.asked))
    unseen = f"; {len(scope.unseen)} shown later not covered" if scope.unseen else ""
    others = f"; {len(split.not_mine)} for other approvers" if split.not_mine else ""
    return CommandOutcome.of("approve", "done" + unseen + others, *sections, recheck=True)


def _approvers(run: CommandRun) -> dict[str, Approvers]:
    config = run.config.config
    if config is None:
        return {}
    return {
        t.name: t.approvers
        if t.approvers is None or isinstance(t.approvers, str)
        else tuple(t.approvers)
        for t in config.targets
    }


def _membership(run: CommandRun) -> IsMember | None:
    """The forge's answer to "is this login in this team", when it can give one."""
    forge = run.adapter.forge
    if not isinstance(forge, TeamMembership):
        return None
    return lambda team, login: forge.team_member(run.repo, team, login)


def withdraw_approval(run: CommandRun, command: Command) -> CommandOutcome:
    store = run.context.state.approvals
    forge = run.adapter.forge
    load_approvals(forge, store, run.repo, run.number, run.pull_key)
    removed = store.withdraw(run.pull_key, run.actor)
    if removed is None:
        return CommandOutcome.of(
            "approve",
            "refused: no approval to withdraw",
            approval_replies.nothing_to_withdraw(run.actor),
        )
    return CommandOutcome.of(
        "approve",
        "done: withdrawn",
        approval_replies.withdrawn(run.actor, run.source),
        recheck=True,
    )
