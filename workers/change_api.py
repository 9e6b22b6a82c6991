"""Change API jobs (design.md 6.5): a request the web app checked and queued becomes a change
pull request through the same engine as the comment commands (dedupe first, the same safety
checks and gate on the result), leaves one audit record, and returns the API's answer.

The API names a repository only by its full name: the forge describes it (clone URL, default
branch, GitHub's installation), and the pull request goes to its default branch. A forge
error worth retrying is raised, so the queue tries the job again while the client still
waits; any other failure is an answer (``error``), as a refusal is.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from bot.changes.engine import ChangeOutcome, ChangeRequest, ChangeServices, open_change
from bot.changes.plan import CreateChange, ObjectChange
from bot.changes.pr_body import Requester
from bot.errors import IchorError, TransientForgeError
from bot.forges.base import RepositoryLookup
from bot.state.audit import AuditTrail, utc_now
from bot.webhooks import ChangeApiEvent
from workers.changes import audit_result, bot_identity
from workers.context import WorkerContext

log = logging.getLogger("ichor.changes.api")
Summary = dict[str, Any]


def change_api_job(context: WorkerContext, forge: str, delivery_id: str, event: object) -> Summary:
    assert isinstance(event, ChangeApiEvent)
    summary: Summary = {
        "forge": forge,
        "delivery": delivery_id,
        "event": "ChangeApiEvent",
        "request": event.request,
    }
    try:
        outcome = _open(context, forge, event)
    except TransientForgeError as exc:
        _audit(context, forge, delivery_id, event, f"error: {exc} (tried again)")
        raise  # the queue's retries: the client may still be waiting for the answer
    except IchorError as exc:
        log.error("change API %s from %s failed: %s", event.verb, event.actor, exc)
        outcome = ChangeOutcome("error", reason=str(exc))
    result = f"error: {outcome.reason}" if outcome.result == "error" else audit_result(outcome)
    _audit(context, forge, delivery_id, event, result, outcome.pull_request_url)
    return {
        **summary,
        "handled": True,
        "result": outcome.result,
        "pull_request_url": outcome.pull_request_url,
        "branch": outcome.branch,
        "created": outcome.created,
        "reason": outcome.reason,
    }


def _open(context: WorkerContext, forge: str, event: ChangeApiEvent) -> ChangeOutcome:
    adapter = context.adapter_for(forge, event.repo.full_name)
    lookup = adapter.forge
    if adapter.open_mirror is None or not isinstance(lookup, RepositoryLookup):
        return ChangeOutcome("refused", reason="this forge cannot take change pull requests")
    repo = lookup.repository(event.repo.full_name)
    if repo.default_branch is None:
        return ChangeOutcome("refused", reason=f"{repo.full_name} has no default branch")
    login = adapter.forge.bot_login(repo)
    services = ChangeServices(
        adapter.forge,
        adapter.open_mirror,
        context.state.locks,
        bot_identity(login, repo),
        cache=context.cache,
        registries=context.registries,
        reports=context.reports,
    )
    requester = Requester(event.requester, via_api=True, client=event.actor)
    request = ChangeRequest(repo, forge, change_of(event), repo.default_branch, requester)
    return open_change(request, services)


def change_of(event: ChangeApiEvent) -> ObjectChange | CreateChange:
    """The engine's change for a request the web app has checked."""
    if event.verb == "create":
        document = orjson.loads(event.document or "null")
        if not isinstance(document, dict):
            raise IchorError("a create request holds no document")
        return CreateChange(document, event.requester, event.target)
    fields = tuple((str(pair[0]), str(pair[1])) for pair in event.fields if len(pair) == 2)
    return ObjectChange(
        event.verb,
        event.namespace,
        event.name,
        event.requester,
        kind=event.kind,
        fields=fields,
        reason=event.reason,
        target=event.target,
    )


def shown_object(event: ChangeApiEvent) -> str:
    """The object as an audit record names it: ``Kind namespace/name`` (``_``: cluster)."""
    return f"{event.kind or '-'} {event.namespace or '_'}/{event.name}"


def _audit(
    context: WorkerContext,
    forge: str,
    delivery_id: str,
    event: ChangeApiEvent,
    result: str,
    pr_url: str | None = None,
) -> None:
    AuditTrail(context.state.audit, clock=utc_now).record(
        forge=forge,
        repo=event.repo.full_name,
        actor=event.actor,
        verb=event.verb,
        result=result,
        target=event.target,
        object=shown_object(event),
        pr_url=pr_url,
        delivery=delivery_id,
    )
