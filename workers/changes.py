"""Change commands (design.md 5, 6): ``/approve <ns>/<name>``, ``/reject``, ``/delete`` and
``/ignore`` become change pull requests through :mod:`bot.changes.engine`; the reply names
the pull request, or why there is none."""

from __future__ import annotations

from urllib.parse import urlsplit

from bot.changes.engine import ChangeOutcome, ChangeRequest, ChangeServices, open_change
from bot.changes.plan import IgnoreChange, ObjectChange
from bot.changes.pr_body import Requester
from bot.changes.safety import anchored
from bot.commands import (
    ApproveObject,
    Command,
    DeleteObject,
    IgnorePattern,
    RejectObject,
    replies,
)
from bot.git.commit import GitIdentity
from workers.command_run import AuditRecord, CommandOutcome, CommandRun

ChangeCommand = ApproveObject | RejectObject | DeleteObject | IgnorePattern


def change_command(run: CommandRun, command: Command) -> CommandOutcome:
    assert isinstance(command, ChangeCommand)  # filed under these types in the table
    verb = command.verb
    adapter = run.adapter
    pull = run.pull
    if adapter.open_mirror is None:
        return CommandOutcome.of(
            verb,
            "refused: no change pull requests on this forge",
            replies.refused(verb, "this forge cannot take change pull requests"),
        )
    link = _comment_link(run)
    requester = Requester(run.actor, link)
    if isinstance(command, IgnorePattern):
        if pull.from_fork or pull.head_ref is None:
            return CommandOutcome.of(
                verb, "refused: a fork's branch; the lines were replied", _lines_for_a_fork(command)
            )
        change: ObjectChange | IgnoreChange = IgnoreChange(
            command.pattern, run.actor, command.target, run.number
        )
        base = pull.head_ref  # merging it fixes the pull request
        rules: str | None = run.repo.default_branch or pull.base_ref
    else:
        change = _object_change(command, run.actor)
        base = run.repo.default_branch or pull.base_ref or "main"
        rules = None
    login = adapter.forge.bot_login(run.repo)
    services = ChangeServices(
        adapter.forge,
        adapter.open_mirror,
        run.context.state.locks,
        bot_identity(login, run.repo),
        cache=run.context.cache,
        registries=run.context.registries,
        reports=run.context.reports,
    )
    request = ChangeRequest(run.repo, run.forge, change, base, requester, config_branch=rules)
    outcome = open_change(request, services)
    audit = AuditRecord(
        verb,
        audit_result(outcome),
        pr_url=outcome.pull_request_url,
        target=command.target,
        object=_object_of(command),
    )
    return CommandOutcome((_said(verb, outcome),), audit)


def _object_of(command: ChangeCommand) -> str:
    if isinstance(command, IgnorePattern):
        return command.pattern
    kind = f"{command.kind} " if isinstance(command, DeleteObject) else ""
    return f"{kind}{command.namespace or '_'}/{command.name}"


def _object_change(command: ChangeCommand, actor: str) -> ObjectChange:
    if isinstance(command, ApproveObject):
        return ObjectChange(
            "approve",
            command.namespace,
            command.name,
            actor,
            fields=command.fields,
            target=command.target,
        )
    if isinstance(command, RejectObject):
        return ObjectChange(
            "reject",
            command.namespace,
            command.name,
            actor,
            reason=command.reason,
            target=command.target,
        )
    assert isinstance(command, DeleteObject)
    return ObjectChange(
        "delete", command.namespace, command.name, actor, kind=command.kind, target=command.target
    )


def _comment_link(run: CommandRun) -> str | None:
    """The triggering comment's URL, for the pull request's body (a button: the PR's)."""
    url = run.pull.url
    if not url or run.source.startswith("check_run:") or not run.source.isdigit():
        return url
    anchor = "note_" if run.forge == "gitlab" else "issuecomment-"
    return f"{url}#{anchor}{run.source}"


def bot_identity(login: str, repo: object) -> GitIdentity:
    """The bot as the author of its commits, at the forge's no-reply address."""
    host = urlsplit(getattr(repo, "git_url", "")).hostname or "localhost"
    return GitIdentity(login, f"{login.replace('[', '').replace(']', '')}@users.noreply.{host}")


def _lines_for_a_fork(command: IgnorePattern) -> str:
    where = (
        f"the `.gittargetignore` of target `{command.target}`"
        if command.target
        else ("the target's root `.gittargetignore`")
    )
    return (
        "This pull request comes from a fork, so the bot cannot push to its branch. To ignore "
        f"the file, add this line to {where} in the pull request:\n\n"
        + replies.quoted(anchored(command.pattern))
    )


def _said(verb: str, outcome: ChangeOutcome) -> str:
    url = outcome.pull_request_url or ""
    if outcome.result == "pr-opened":
        return f"Opened {url} for `/{verb}`."
    if outcome.result == "pr-existing":
        return f"A pull request for this `/{verb}` is already open: {url} (nothing was pushed)."
    return f"`/{verb}` changed nothing: {replies.plain(outcome.reason or 'refused')}."


def audit_result(outcome: ChangeOutcome) -> str:
    if outcome.result == "refused":
        return f"refused: {outcome.reason}"
    return outcome.result
