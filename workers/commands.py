"""Command jobs: a new comment's commands, and GitHub's check-run buttons (design.md 5).

The order of a comment's job: skip what no person wrote (bots, the bot itself); read the
base branch's ``.ichor.yaml`` (a repository without one gets no reaction and no reply, so
another tool's ``/approve`` is left alone); react with ``eyes``; run each command after its
permission check; post at most one reply, and only when there is something to read; audit
each command; re-run the check once when a command changed what it decides.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.approvals.seen import Asked, AskedAt, AskedOn
from bot.checks.pipeline import run_check
from bot.checks.request import CheckRequest, MergeBase, acted_on, pull_request
from bot.commands import (
    ApproveCancel,
    ApproveHead,
    Command,
    CommandProblem,
    Help,
    ParsedComment,
    Recheck,
    help_text,
    parse_comment,
    replies,
)
from bot.commands.authorize import Authorization, permission_named, refusal, required_permission
from bot.config.schema import ConfigResult
from bot.errors import ForgeError, IchorError, PermanentForgeError
from bot.forges.base import Permission, PullRequestRef
from bot.repos import RepoRef
from bot.state.audit import AuditTrail, utc_now
from bot.state.base import pull_key
from bot.web.outcomes import Unposted
from bot.webhooks import CommentEvent, RequestedActionEvent
from workers.approvals import approve_head, withdraw_approval
from workers.base_config import read_base_config
from workers.changes import change_command
from workers.context import Adapter, WorkerContext
from workers.outcomes import not_posted
from workers.services import check_services, ran_before

log = logging.getLogger("ichor.commands")
Summary = dict[str, object]
# The check-run buttons and the command each one runs.
BUTTONS: dict[str, type[ApproveHead] | type[Recheck]] = {"approve": ApproveHead, "recheck": Recheck}


@dataclass(frozen=True, slots=True)
class _Audit:
    verb: str
    result: str
    pr_url: str | None
    target: str | None
    object: str | None


@dataclass
class CommandRun:
    """One comment's (or one button's) commands, and what running them produced."""

    context: WorkerContext
    adapter: Adapter
    forge: str
    delivery: str
    repo: RepoRef
    number: int
    actor: str
    source: str  # the comment's id, or check_run:<id>
    # When the comment was written, or the head of the check whose button was pressed: what
    # an /approve may cover (None: the forge did not say).
    asked: Asked | None = None
    pull: PullRequestRef | None = None
    config: ConfigResult | None = None
    sections: list[str] = field(default_factory=list)
    recheck: bool = False
    resume: bool = False  # the job ran before: the check it started may exist
    results: list[str] = field(default_factory=list)
    audits: list[_Audit] = field(default_factory=list)

    @property
    def pull_key(self) -> str:
        return pull_key(self.forge, self.repo.full_name, self.number)

    def head_request(self, purpose: str) -> CheckRequest:
        """The check of the pull request's current head, as a new delivery would ask it."""
        pull = self.pull
        if pull is None or pull.head_sha is None or pull.base_ref is None:
            raise PermanentForgeError(f"{self.repo.full_name}#{self.number}: its head is not known")
        return pull_request(
            self.repo,
            pull.head_sha,
            MergeBase(pull.base_sha, pull.base_ref),
            self.number,
            forge=self.forge,
            external_id=f"{self.delivery}:{purpose}",
            pull_head_ref=self.adapter.forge.pull_head_ref,
            author=pull.author,
        )

    def audit(
        self,
        verb: str,
        result: str,
        *,
        pr_url: str | None = None,
        target: str | None = None,
        object: str | None = None,
    ) -> None:
        """Kept until the commands have run, then written off the event loop (the store is
        Redis): see :func:`_audited`."""
        self.results.append(f"{verb}: {result}")
        self.audits.append(_Audit(verb, result, pr_url, target, object))


def _audited(run: CommandRun, work: Coroutine[Any, Any, bool]) -> bool:
    """Run the commands, then write their audit records, even when the run failed."""
    try:
        return run.context.run(work)
    finally:
        trail = AuditTrail(run.context.state.audit, clock=utc_now)
        for entry in run.audits:
            trail.record(
                pr_url=entry.pr_url,
                target=entry.target,
                object=entry.object,
                forge=run.forge,
                repo=run.repo.full_name,
                actor=run.actor,
                verb=entry.verb,
                result=entry.result,
                number=run.number,
                delivery=run.delivery,
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
        run = _command_run(
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
    handled = _audited(run, _run_comment(run, parsed))
    return {**summary, "handled": handled, "results": run.results}


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
        run = _command_run(
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
    handled = _audited(run, _run_commands(run, parsed, react_to=None))
    return {**summary, "handled": handled, "results": run.results}


def _command_run(
    context: WorkerContext,
    forge: str,
    delivery_id: str,
    repo: RepoRef,
    installation_id: int | None,
    who: tuple[int, str, str],  # the pull request, the actor, what asked (comment or button)
    asked: Asked | None,
) -> CommandRun:
    """Raises PermanentForgeError when the forge's adapter cannot be built."""
    adapter = context.adapter_for(forge, repo.full_name)
    number, actor, source = who
    run = CommandRun(
        context,
        adapter,
        forge,
        delivery_id,
        acted_on(repo, installation_id),
        number,
        actor,
        source,
        asked,
    )
    run.resume = ran_before(context)
    return run


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


async def _run_comment(run: CommandRun, parsed: ParsedComment) -> bool:
    bot = await run.adapter.forge.bot_login(run.repo)
    if run.actor.casefold() == bot.casefold():
        return False  # the bot's own reply quotes commands; it never answers itself
    return await _run_commands(run, parsed, react_to=run.source)


async def _run_commands(run: CommandRun, parsed: ParsedComment, *, react_to: str | None) -> bool:
    forge = run.adapter.forge
    run.pull = await forge.get_pull_request(run.repo, run.number)
    run.config = await read_base_config(run.adapter, run.repo, run.pull)
    if not run.config.present:
        log.info("%s: no .ichor.yaml on the base branch; commands ignored", run.repo.full_name)
        return False
    if react_to is not None:
        try:
            await forge.add_reaction(run.repo, run.number, react_to, "eyes")
        except ForgeError as exc:  # an acknowledgement, not the command: go on
            log.warning("%s#%d: no reaction: %s", run.repo.full_name, run.number, exc)
    _problems(run, parsed.problems)
    for command in parsed.commands:
        await _one(run, command)
    body = replies.compose(run.sections)
    if body is not None:  # first: an approval's reply is its durable record
        await forge.post_comment(run.repo, run.number, body)
    if run.recheck:
        await _check_again(run)
    return True


def _problems(run: CommandRun, problems: Sequence[CommandProblem]) -> None:
    usage = [p for p in problems if p.kind != "unknown-verb"]
    if usage:
        run.sections.append(replies.usage_problems(usage))
        for problem in usage:
            run.audit(problem.verb, f"usage: {problem.message}")
    if len(usage) < len(problems):
        run.sections.append(_help(run))
        run.audit("help", "done")


def _help(run: CommandRun) -> str:
    config = run.config.config if run.config is not None else None
    targets = [(t.name, t.mode) for t in config.targets] if config is not None else []
    permission = config.commands.min_permission if config is not None else None
    text = help_text(targets, min_permission=permission)
    if run.forge == "gitlab":  # GitLab runs its own /approve quick action first
        text += "\n\nOn GitLab, write `/ichor approve` and `/ichor approve cancel`."
    return text


def _authorization(run: CommandRun, permission: Permission) -> Authorization:
    config = run.config.config if run.config is not None else None
    commands = config.commands if config is not None else None
    return Authorization(
        actor=run.actor,
        permission=permission,
        min_permission=permission_named(commands.min_permission if commands else "write"),
        pr_author=run.pull.author if run.pull is not None else None,
        allow_author_approval=bool(commands and commands.allow_author_approval),
    )


async def _permission(run: CommandRun) -> Permission:
    cache = run.context.state.permissions
    cached = await asyncio.to_thread(cache.get, run.forge, run.repo.full_name, run.actor)
    if cached is not None:
        return cached
    found = await run.adapter.forge.permission(run.repo, run.actor)
    await asyncio.to_thread(cache.put, run.forge, run.repo.full_name, run.actor, found)
    return found


async def _one(run: CommandRun, command: Command) -> None:
    verb = command.verb
    if isinstance(command, Help):
        run.sections.append(_help(run))
        run.audit(verb, "done")
        return
    needed = required_permission(command, _authorization(run, Permission.NONE).min_permission)
    try:
        permission = await _permission(run) if needed > Permission.NONE else Permission.NONE
    except ForgeError as exc:
        log.warning("%s: permission of %s not known: %s", run.repo.full_name, run.actor, exc)
        run.sections.append(replies.lookup_failed(verb, run.actor, str(exc)))
        run.audit(verb, "refused: the permission lookup failed")
        return
    why = refusal(command, _authorization(run, permission))
    if why is not None:
        run.sections.append(replies.refused(verb, why))
        run.audit(verb, f"refused: {why}")
        return
    try:
        if isinstance(command, Recheck):
            run.recheck = True
            run.audit(verb, "done")
        elif isinstance(command, ApproveHead):
            await approve_head(run)
        elif isinstance(command, ApproveCancel):
            await withdraw_approval(run)
        else:
            await change_command(run, command)
    except IchorError as exc:
        log.error("%s#%d: /%s failed: %s", run.repo.full_name, run.number, verb, exc)
        run.sections.append(replies.failed(verb, str(exc)))
        run.audit(verb, f"error: {exc}")


async def _check_again(run: CommandRun) -> None:
    """Check the pull request's current head now, as a new delivery would: a newer head
    recorded for it makes any older queued check of this pull request stand down."""
    request = run.head_request("recheck")
    heads = run.context.state.heads
    await asyncio.to_thread(heads.record_head, run.pull_key, request.head_sha, redelivery=False)
    services = check_services(run.context, run.adapter, run.forge, resume=run.resume)
    result = await run_check(request, services)
    log.info("%s#%d: checked again: %s", run.repo.full_name, run.number, result.status)
