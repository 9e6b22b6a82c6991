"""Jobs the queue runs. Each takes JSON-safe arguments and returns a JSON-safe summary.

``handle_delivery`` is the one entry point for webhook deliveries: it turns the event back into
its typed form and looks its job up in :data:`JOBS`. Pull requests, pushes and re-requested
checks run the check pipeline (a push to the default branch of a repository without
``.ichor.yaml`` then proposes one); installations propose it too; the other events are
acknowledged and logged until their features arrive. A job that runs again (a retry, a job
recovered from a dead worker, a redelivery) resumes the check it had started.
``report_abandoned`` ends the check of a job whose workers kept dying. The RQ entry points
use the context installed at start-up (:func:`workers.context.install`);
:func:`run_delivery` takes it as an argument.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from bot.checks.pipeline import CheckStatus, report_failure, run_check
from bot.checks.request import CheckRequest, asks_for_check, request_for
from bot.errors import PermanentForgeError
from bot.queueing.base import delivery_job_id
from bot.queueing.inprocess import JobRunner
from bot.state.base import group_ended
from bot.state.outcomes import Unposted
from bot.webhooks import (
    ChangeApiEvent,
    ChangeRequestEvent,
    CheckRerequestEvent,
    CommentEvent,
    InstallationEvent,
    MergeGroupEvent,
    PushEvent,
    RepositoryAddedEvent,
    RequestedActionEvent,
    event_from_dict,
)
from workers.change_api import change_api_job
from workers.command_jobs import comment_job, requested_action_job
from workers.context import Adapter, WorkerContext, installed
from workers.onboarding import installation_job, onboard_unconfigured_push, repository_added_job
from workers.outcomes import not_posted, run_watched, unposted_kind
from workers.services import check_services, ran_before

log = logging.getLogger("ichor.jobs")
Summary = dict[str, Any]
# A job: the context, the delivery's forge and id, and its typed event.
Job = Callable[[WorkerContext, str, str, object], Summary]


def handle_delivery(forge: str, delivery_id: str, event: dict[str, Any]) -> Summary:
    return run_delivery(installed(), forge, delivery_id, event)


def report_abandoned(forge: str, delivery_id: str, event: dict[str, Any]) -> Summary:
    """End the check of a delivery whose job was abandoned with no retries left."""
    return abandon_delivery(installed(), forge, delivery_id, event)


def runner(context: WorkerContext) -> JobRunner:
    """The delivery job bound to ``context``, for the in-process queue."""

    def run(forge: str, delivery_id: str, event: dict[str, Any]) -> Summary:
        return run_delivery(context, forge, delivery_id, event)

    return run


def run_delivery(
    context: WorkerContext, forge: str, delivery_id: str, event: dict[str, Any]
) -> Summary:
    typed = event_from_dict(event)
    job = JOBS.get(type(typed))
    if job is None:
        log.info("delivery %s from %s: %s, nothing to do", delivery_id, forge, type(typed).__name__)
        return {**_summary(forge, delivery_id, typed), "handled": False}
    return run_watched(
        context,
        forge,
        delivery_id,
        _repository(typed),
        lambda watched: job(watched, forge, delivery_id, typed),
        job_id=delivery_job_id(forge, delivery_id, event),
    )


def _repository(event: object) -> str:
    return str(getattr(getattr(event, "repo", None), "full_name", "-"))


def _summary(forge: str, delivery_id: str, event: object) -> Summary:
    return {"forge": forge, "delivery": delivery_id, "event": type(event).__name__}


def check_job(context: WorkerContext, forge: str, delivery_id: str, event: object) -> Summary:
    """Check the revision the event names and post the result."""
    summary = _summary(forge, delivery_id, event)
    if not asks_for_check(event):
        log.info("delivery %s from %s: %s, nothing to do", delivery_id, forge, summary["event"])
        return {**summary, "handled": False}
    full_name = event.repo.full_name
    try:
        adapter = context.adapter_for(forge, full_name)
    except PermanentForgeError as exc:
        # Nothing can be posted without a working adapter: say so once, do not retry.
        log.error("delivery %s from %s: cannot check %s: %s", delivery_id, forge, full_name, exc)
        return {**summary, "handled": False, **not_posted(Unposted.SETTINGS, str(exc))}
    request = _request(adapter, forge, delivery_id, event)
    assert request is not None  # asks_for_check said so
    services = check_services(context, adapter, forge, resume=ran_before(context))
    result = run_check(request, services)
    log.info(
        "delivery %s: %s %s at %s: %s %s",
        delivery_id,
        forge,
        request.repo.full_name,
        request.head_sha[:12],
        result.status,
        result.title or "",
    )
    summary = {**summary, "handled": True, "check": result.to_dict()}
    _remember_checked(context, request, result.status)
    if result.unposted is not None:
        return {**summary, **_unposted(result.title or "", result.unposted)}
    if result.status in _SILENT:
        summary["silent"] = str(result.status)
    if result.status is CheckStatus.NOT_CONFIGURED and isinstance(event, PushEvent):
        summary.update(onboard_unconfigured_push(context, adapter, forge, event, request.repo))
        if "onboarding" in summary:  # a proposal was made (or failed): that is what came of it
            summary.pop("silent")
            summary["results"] = [f"onboarding: {summary['onboarding']}"]
    return summary


# A check that posted no verdict, on purpose.
_SILENT = (CheckStatus.SUPERSEDED, CheckStatus.NOT_CONFIGURED, CheckStatus.GROUP_ENDED)
# A check that ended so, on a pull request's head, needs no other (the reconciler reads this).
_ENDED = (CheckStatus.POSTED, CheckStatus.FAILED, CheckStatus.NOT_CONFIGURED)


def _remember_checked(context: WorkerContext, request: CheckRequest, status: CheckStatus) -> None:
    if request.pull is None or status not in _ENDED:
        return
    try:
        context.state.checked.remember_checked(request.pull, request.head_sha)
    except Exception as exc:  # the result is posted; the reconciler asks the forge instead
        log.warning("could not note %s at %s as checked: %s", request.pull, request.head_sha, exc)


def _unposted(reason: str, error: Exception) -> Summary:
    """The check failed, and so did posting that it had."""
    said = str(error)
    why = said if said == reason else f"{reason}; and posting that failed: {said}"
    return not_posted(unposted_kind(error), why)


def merge_group_job(context: WorkerContext, forge: str, delivery_id: str, event: object) -> Summary:
    """A merge group's check, or its end: a destroyed group's end was recorded as the delivery
    was queued (``QueuedDelivery.head``), so its check, queued or running, posts no verdict."""
    assert isinstance(event, MergeGroupEvent)
    if event.action != "destroyed":
        return check_job(context, forge, delivery_id, event)
    log.info(
        "delivery %s: %s %s: merge group at %s destroyed; nothing more is posted for it",
        delivery_id,
        forge,
        event.repo.full_name,
        event.head_sha[:12],
    )
    return {**_summary(forge, delivery_id, event), "handled": True, "silent": "group-ended"}


# What each event asks a worker to do; events not named here are acknowledged and logged.
JOBS: dict[type, Job] = {
    ChangeRequestEvent: check_job,
    PushEvent: check_job,
    MergeGroupEvent: merge_group_job,
    CheckRerequestEvent: check_job,
    CommentEvent: comment_job,
    RequestedActionEvent: requested_action_job,
    ChangeApiEvent: change_api_job,  # queued by POST /api/v1/changes, never by a webhook
    InstallationEvent: installation_job,
    RepositoryAddedEvent: repository_added_job,
}

ABANDONED_REASON = (
    "the worker running this check stopped before it finished, every time it was tried; "
    "re-run the check or push again"
)


def abandon_delivery(
    context: WorkerContext, forge: str, delivery_id: str, event: dict[str, Any]
) -> Summary:
    """Its outcome is kept under the abandoned job's id: that is the job the page lists."""
    typed = event_from_dict(event)

    def report(watched: WorkerContext) -> Summary:
        summary: Summary = {"forge": forge, "delivery": delivery_id, "abandoned": True}
        if not asks_for_check(typed):
            return {**summary, "silent": "nothing was asked of the forge"}
        try:
            adapter = watched.adapter_for(forge, typed.repo.full_name)
        except PermanentForgeError as exc:
            return {**summary, **not_posted(Unposted.SETTINGS, str(exc))}
        request = _request(adapter, forge, delivery_id, typed)
        if request is None:
            return {**summary, "silent": "nothing was asked of the forge"}
        if request.group is not None and group_ended(watched.state.heads, request.group.key):
            return {**summary, "silent": str(CheckStatus.GROUP_ENDED)}  # nothing is wanted
        unposted = report_failure(
            adapter.forge, request, None, ABANDONED_REASON, watched.history, resume=True
        )
        return summary if unposted is None else {**summary, **_unposted(ABANDONED_REASON, unposted)}

    job_id = delivery_job_id(forge, delivery_id, event)
    return run_watched(context, forge, delivery_id, _repository(typed), report, job_id=job_id)


def _request(adapter: Adapter, forge: str, delivery_id: str, event: object) -> CheckRequest | None:
    pull_head_ref = adapter.forge.pull_head_ref
    return request_for(event, forge=forge, delivery_id=delivery_id, pull_head_ref=pull_head_ref)
