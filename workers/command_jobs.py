"""Command jobs: a new comment's commands, and GitHub's check-run buttons (design.md 5).

The order of a comment's job: skip what no person wrote (bots, the bot itself); read the
base branch's ``.ichor.yaml`` (a repository without one gets no reaction and no reply, so
another tool's ``/approve`` is left alone); react with ``eyes``; run each command after its
permission check; post at most one reply, and only when there is something to read; audit
each command; re-run the check once when a command changed what it decides.

Each command's handler is looked up in :data:`HANDLERS` by the command's type. It reads the
run (:class:`workers.command_run.CommandRun`, frozen) and returns a
:class:`~workers.command_run.CommandOutcome`: its reply sections, its audit record, whether to
re-check. This module folds the outcomes into the one reply, the audit records and the one
re-check; the handlers (:mod:`workers.approvals`, :mod:`workers.changes`) never import it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime

from bot.approvals.seen import Asked, AskedAt, AskedOn
from bot.checks.pipeline import run_check
from bot.checks.request import acted_on
from bot.commands import (
    ApproveCancel,
    ApproveHead,
    ApproveObject,
    Command,
    CommandProblem,
    DeleteObject,
    Help,
    IgnorePattern,
    ParsedComment,
    Recheck,
    RejectObject,
    help_text,
    parse_comment,
    replies,
)
from bot.commands.authorize import Authorization, permission_named, refusal, required_permission
from bot.errors import ForgeError, IchorError, PermanentForgeError
from bot.forges.base import Permission
from bot.repos import RepoRef
from bot.state.audit import AuditTrail, utc_now
from bot.state.outcomes import Unposted
from bot.webhooks import CommentEvent, RequestedActionEvent
from workers.approvals import approve_head, withdraw_approval
from workers.base_config import read_base_config
from workers.changes import change_command
from workers.command_run import Asking, CommandOutcome, CommandRun, Handler
from workers.context import WorkerContext
from workers.outcomes import not_posted
from workers.services import check_services, ran_before

log = logging.getLogger("ichor.commands")
Summary = dict[str, object]
# The check-run buttons and the command each one runs.
BUTTONS: dict[str, type[ApproveHead] | type[Recheck]] = {"approve": ApproveHead, "recheck": Recheck}


def _audited(asking: Asking, outcomes: list[CommandOutcome], work: Callable[[], bool]) -> bool:
    """Run the commands, then write the audit records of their outcomes, even when the run
    failed."""
    try:
        return work()
    finally:
        trail = AuditTrail(asking.context.state.audit, clock=utc_now)
        for outcome in outcomes:
            entry = outcome.audit
            trail.record(
                pr_url=entry.pr_url,
                target=entry.target,
                object=entry.object,
                forge=asking.forge,
                repo=asking.repo.full_name,
                actor=asking.actor,
                verb=entry.verb,
                result=entry.result,
                number=asking.number,
                delivery=asking.delivery,
            )


def comment_job(context: WorkerContext, forge: str, delivery_id: str, event: object) -> Summary:
    assert isinstance(event, CommentEvent)
    summary: Summary = {"forge": forge, "delivery": delivery_id, "event": "CommentEvent"}
    if not event.on_change_request or event.number is None:
        return {**summary, "handled": False, "why": "not a comment on a pull request"}
    if event.author_is_bot:
        return {**summary, "handled": False, "why": "written by a bot"}
    parsed = parse_comment(event.body)
    if not parsed.commands and not parsed.problems:
        return {**summary, "handled": False, "why": "no command"}
    try:
        asking = _asking(
            context,
            forge,
            delivery_id,
            event.repo,
            event.installation_id,
            (event.number, event.author, event.comment_id),
            _asked_at(event.created_at),
        )
    except PermanentForgeError as exc:
        return {**summary, "handled": False, **_no_adapter(forge, event.repo, exc)}
    outcomes: list[CommandOutcome] = []
    handled = _audited(asking, outcomes, lambda: _run_comment(asking, parsed, outcomes))
    return {**summary, "handled": handled, "results": [o.audit.line for o in outcomes]}


def requested_action_job(
    context: WorkerContext, forge: str, delivery_id: str, event: object
) -> Summary:
    """A check-run button: the same command, the clicking user as the actor."""
    assert isinstance(event, RequestedActionEvent)
    summary: Summary = {"forge": forge, "delivery": delivery_id, "event": "RequestedActionEvent"}
    command = BUTTONS.get(event.identifier)
    if command is None or event.actor_is_bot or not event.pull_numbers:
        return {**summary, "handled": False, "why": "not a button of ours on a pull request"}
    try:
        asking = _asking(
            context,
            forge,
            delivery_id,
            event.repo,
            event.installation_id,
            (event.pull_numbers[0], event.actor, f"check_run:{event.check_run_id}"),
            AskedOn(event.head_sha),
        )
    except PermanentForgeError as exc:
        return {**summary, "handled": False, **_no_adapter(forge, event.repo, exc)}
    parsed = ParsedComment((command(1),), (), truncated=False)
    outcomes: list[CommandOutcome] = []
    handled = _audited(
        asking, outcomes, lambda: _run_commands(asking, parsed, outcomes, react_to=None)
    )
    return {**summary, "handled": handled, "results": [o.audit.line for o in outcomes]}


def _asking(
    context: WorkerContext,
    forge: str,
    delivery_id: str,
    repo: RepoRef,
    installation_id: int | None,
    who: tuple[int, str, str],  # the pull request, the actor, what asked (comment or button)
    asked: Asked | None,
) -> Asking:
    """Raises PermanentForgeError when the forge's adapter cannot be built."""
    adapter = context.adapter_for(forge, repo.full_name)
    number, actor, source = who
    return Asking(
        context,
        adapter,
        forge,
        delivery_id,
        acted_on(repo, installation_id),
        number,
        actor,
        source,
        asked,
        ran_before(context),
    )


def _no_adapter(forge: str, repo: RepoRef, exc: PermanentForgeError) -> Summary:
    # Without an adapter nothing can be answered: the job ends failed, saying why.
    log.error("%s %s: commands cannot run: %s", forge, repo.full_name, exc)
    return not_posted(Unposted.SETTINGS, str(exc))


def _asked_at(created_at: str | None) -> AskedAt | None:
    """The comment's time as the webhook mapping wrote it (ISO 8601, UTC)."""
    if created_at is None:
        return None
    try:
        return AskedAt(datetime.fromisoformat(created_at))
    except ValueError:
        return None


def _run_comment(asking: Asking, parsed: ParsedComment, outcomes: list[CommandOutcome]) -> bool:
    bot = asking.adapter.forge.bot_login(asking.repo)
    if asking.actor.casefold() == bot.casefold():
        return False  # the bot's own reply quotes commands; it never answers itself
    return _run_commands(asking, parsed, outcomes, react_to=asking.source)


def _run_commands(
    asking: Asking,
    parsed: ParsedComment,
    outcomes: list[CommandOutcome],  # each command's, as it ends: audited even if a later fails
    *,
    react_to: str | None,
) -> bool:
    forge = asking.adapter.forge
    pull = forge.get_pull_request(asking.repo, asking.number)
    rules = read_base_config(asking.adapter, asking.repo, pull, asking.forge)
    if not rules.config.present:
        log.info("%s: no .ichor.yaml on the base branch; commands ignored", asking.repo.full_name)
        return False
    run = asking.run(pull, rules.config, rules.owners)
    if react_to is not None:
        try:
            forge.add_reaction(run.repo, run.number, react_to, "eyes")
        except ForgeError as exc:  # an acknowledgement, not the command: go on
            log.warning("%s#%d: no reaction: %s", run.repo.full_name, run.number, exc)
    outcomes.extend(_problems(run, parsed.problems))
    for command in parsed.commands:
        outcomes.append(_one(run, command))
    body = replies.compose(section for outcome in outcomes for section in outcome.sections)
    if body is not None:  # first: an approval's reply is its durable record
        forge.post_comment(run.repo, run.number, body)
    if any(outcome.recheck for outcome in outcomes):  # once, however many asked
        _check_again(run)
    return True


def _problems(run: CommandRun, problems: Sequence[CommandProblem]) -> list[CommandOutcome]:
    """One reply section for the usage problems (each audited), and help for an unknown verb."""
    outcomes = []
    usage = [p for p in problems if p.kind != "unknown-verb"]
    for i, problem in enumerate(usage):
        section = (replies.usage_problems(usage),) if i == 0 else ()
        outcomes.append(CommandOutcome.of(problem.verb, f"usage: {problem.message}", *section))
    if len(usage) < len(problems):
        outcomes.append(CommandOutcome.of("help", "done", _help(run)))
    return outcomes


def _help(run: CommandRun) -> str:
    config = run.config.config
    targets = [(t.name, t.mode) for t in config.targets] if config is not None else []
    permission = config.commands.min_permission if config is not None else None
    text = help_text(targets, min_permission=permission)
    if run.forge == "gitlab":  # GitLab runs its own /approve quick action first
        text += "\n\nOn GitLab, write `/ichor approve` and `/ichor approve cancel`."
    return text


def _authorization(run: CommandRun, permission: Permission) -> Authorization:
    config = run.config.config
    commands = config.commands if config is not None else None
    return Authorization(
        actor=run.actor,
        permission=permission,
        min_permission=permission_named(commands.min_permission if commands else "write"),
        pr_author=run.pull.author,
        allow_author_approval=bool(commands and commands.allow_author_approval),
    )


def _permission(run: CommandRun) -> Permission:
    cache = run.context.state.permissions
    cached = cache.get(run.forge, run.repo.full_name, run.actor)
    if cached is not None:
        return cached
    found = run.adapter.forge.permission(run.repo, run.actor)
    cache.put(run.forge, run.repo.full_name, run.actor, found)
    return found


def _one(run: CommandRun, command: Command) -> CommandOutcome:
    """The command's permission check, then its handler from :data:`HANDLERS`."""
    verb = command.verb
    needed = required_permission(command, _authorization(run, Permission.NONE).min_permission)
    try:
        permission = _permission(run) if needed > Permission.NONE else Permission.NONE
    except ForgeError as exc:
        log.warning("%s: permission of %s not known: %s", run.repo.full_name, run.actor, exc)
        return CommandOutcome.of(
            verb,
            "refused: the permission lookup failed",
            replies.lookup_failed(verb, run.actor, str(exc)),
        )
    why = refusal(command, _authorization(run, permission))
    if why is not None:
        return CommandOutcome.of(verb, f"refused: {why}", replies.refused(verb, why))
    try:
        return HANDLERS[type(command)](run, command)
    except IchorError as exc:
        log.error("%s#%d: /%s failed: %s", run.repo.full_name, run.number, verb, exc)
        return CommandOutcome.of(verb, f"error: {exc}", replies.failed(verb, str(exc)))


def _help_command(run: CommandRun, command: Command) -> CommandOutcome:
    return CommandOutcome.of(command.verb, "done", _help(run))


def _recheck(run: CommandRun, command: Command) -> CommandOutcome:
    return CommandOutcome.of(command.verb, "done", recheck=True)


# Each command's handler, by the command's type; none needs more than the permission check in
# `_one` (Help needs none: `required_permission` says so).
HANDLERS: dict[type[Command], Handler] = {
    Help: _help_command,
    Recheck: _recheck,
    ApproveHead: approve_head,
    ApproveCancel: withdraw_approval,
    ApproveObject: change_command,
    RejectObject: change_command,
    DeleteObject: change_command,
    IgnorePattern: change_command,
}


def _check_again(run: CommandRun) -> None:
    """Check the pull request's current head now, as a new delivery would: a newer head
    recorded for it makes any older queued check of this pull request stand down."""
    request = run.head_request("recheck")
    heads = run.context.state.heads
    heads.record_head(run.pull_key, request.head_sha, redelivery=False)
    services = check_services(run.context, run.adapter, run.forge, resume=run.resume)
    result = run_check(request, services)
    log.info("%s#%d: checked again: %s", run.repo.full_name, run.number, result.status)
