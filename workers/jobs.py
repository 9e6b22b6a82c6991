"""Jobs the queue runs. Each takes JSON-safe arguments and returns a JSON-safe summary.

``handle_delivery`` is the one entry point for webhook deliveries: it turns the event back into
its typed form and dispatches on it. Pull requests, pushes and re-requested checks run the
check pipeline; the other events are acknowledged and logged until their features arrive.
A job that runs again (a retry, a job recovered from a dead worker, a redelivery) resumes the
check it had started. ``report_abandoned`` ends the check of a job whose workers kept dying.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from bot.checks.pipeline import (
    CheckRequest,
    CheckResult,
    CheckServices,
    report_failure,
    run_check,
)
from bot.errors import PermanentForgeError
from bot.forges.base import Forge, RepoHandle
from bot.queueing.base import pull_key
from bot.webhooks import (
    ChangeRequestEvent,
    CheckRerequestEvent,
    PushEvent,
    RepoRef,
    event_from_dict,
)
from workers.context import OpenTree, WorkerContext, current

log = logging.getLogger("ichor.jobs")
_ZERO = "0" * 40


def handle_delivery(forge: str, delivery_id: str, event: dict[str, Any]) -> dict[str, Any]:
    typed = event_from_dict(event)
    kind = type(typed).__name__
    summary: dict[str, Any] = {"forge": forge, "delivery": delivery_id, "event": kind}
    request = check_request(forge, delivery_id, typed)
    if request is None:
        log.info("delivery %s from %s: %s, nothing to do", delivery_id, forge, kind)
        return {**summary, "handled": False}
    context = current()
    request = dataclasses.replace(request, resume=_ran_before(context))
    try:
        adapter = context.forge_for(forge, request.repo.full_name)
    except PermanentForgeError as exc:
        # Nothing can be posted without a working adapter: say so once, do not retry.
        log.error(
            "delivery %s from %s: cannot check %s: %s",
            delivery_id,
            forge,
            request.repo.full_name,
            exc,
        )
        return {**summary, "handled": False, "error": str(exc)}
    result = context.run(_check(context, adapter, forge, request))
    log.info(
        "delivery %s: %s %s at %s: %s %s",
        delivery_id,
        forge,
        request.repo.full_name,
        request.head_sha[:12],
        result.status,
        result.title or "",
    )
    return {**summary, "handled": True, "check": result.to_dict()}


ABANDONED_REASON = (
    "the worker running this check stopped before it finished, every time it was tried; "
    "re-run the check or push again"
)


def report_abandoned(forge: str, delivery_id: str, event: dict[str, Any]) -> dict[str, Any]:
    """End the check of a delivery whose job was abandoned with no retries left."""
    request = check_request(forge, delivery_id, event_from_dict(event))
    summary: dict[str, Any] = {"forge": forge, "delivery": delivery_id, "abandoned": True}
    if request is None:
        return summary
    context = current()
    adapter, _ = context.forge_for(forge, request.repo.full_name)
    resumed = dataclasses.replace(request, resume=True)
    context.run(report_failure(adapter, resumed, None, ABANDONED_REASON, context.history))
    return summary


def _ran_before(context: WorkerContext) -> bool:
    """Whether this job has run before, so its check may exist already. Unknown counts as yes:
    a wasted look-up is cheap, a second check run is not."""
    from rq import get_current_job

    job = get_current_job()
    if job is None or context.attempts is None:
        return False
    try:
        return context.attempts.begin_attempt(job.id) > 1
    except Exception:
        log.warning("job %s: cannot count its runs; looking for a check it started", job.id)
        return True


async def _pull_of_rerun(forge: Forge, forge_name: str, request: CheckRequest) -> CheckRequest:
    """A re-requested check of a pull request's head is compared as its pull request is."""
    for number in request.rerequested_pulls:
        pull = await forge.get_pull_request(request.repo, number)
        if pull.head_sha == request.head_sha and pull.base_sha and pull.base_ref:
            return dataclasses.replace(
                request,
                base_sha=pull.base_sha,
                fetch_refs=(f"refs/pull/{number}/head", f"refs/heads/{pull.base_ref}"),
                pull=pull_key(forge_name, request.repo.full_name, number),
                number=number,
                use_merge_base=True,
                compare_with_parent=False,
            )
    return request


async def _check(
    context: WorkerContext, adapter: tuple[Forge, OpenTree], forge_name: str, request: CheckRequest
) -> CheckResult:
    forge, open_tree = adapter

    async def resolve(request: CheckRequest) -> CheckRequest:
        return await _pull_of_rerun(forge, forge_name, request)

    settings = context.settings
    services = CheckServices(
        forge,
        open_tree,
        heads=context.pulls,
        cache=context.cache,
        # The check run carries GitHub's result; elsewhere the summary comment is the result.
        summary_comment=settings.github_summary_comment if forge.name == "github" else True,
        details_url=settings.public_url,
        line_comments=settings.line_comments,
        line_comment_limit=settings.line_comment_limit,
        memory=context.pulls,
        history=context.history,
        resolve=resolve if request.rerequested_pulls else None,
    )
    return await run_check(request, services)


def _handle(repo: RepoRef, installation_id: int | None) -> RepoHandle:
    return RepoHandle(
        repo.forge.value,
        repo.full_name,
        repo.clone_url or repo.web_url + ".git",
        installation_id=installation_id,
        project_id=repo.id,
    )


def check_request(forge: str, delivery_id: str, event: object) -> CheckRequest | None:
    """The check an event asks for, or None when it asks for none."""
    if isinstance(event, ChangeRequestEvent):
        head_ref = (
            f"refs/merge-requests/{event.number}/head"
            if forge == "gitlab"
            else f"refs/pull/{event.number}/head"
        )
        return CheckRequest(
            _handle(event.repo, event.installation_id),
            event.head_sha,
            event.base_sha,
            (head_ref, f"refs/heads/{event.base_ref}"),
            delivery_id,
            pull=pull_key(forge, event.repo.full_name, event.number),
            number=event.number,
            use_merge_base=True,
            base_ref=event.base_ref,
        )
    if isinstance(event, PushEvent):
        if event.deleted or not event.ref.startswith("refs/heads/") or event.after == _ZERO:
            return None
        default = event.repo.default_branch
        if default and event.ref != f"refs/heads/{default}":
            # A branch other than the default one is checked as a pull request into the
            # default branch would be (its merge base, the default branch's configuration),
            # so its verdict never disagrees with that pull request's check on the same commit.
            return CheckRequest(
                _handle(event.repo, event.installation_id),
                event.after,
                None,
                (event.ref, f"refs/heads/{default}"),
                delivery_id,
                use_merge_base=True,
                base_ref=default,
            )
        base = None if event.created or event.before == _ZERO else event.before
        return CheckRequest(
            _handle(event.repo, event.installation_id),
            event.after,
            base,
            (event.ref,),
            delivery_id,
        )
    if isinstance(event, CheckRerequestEvent):
        # A re-run: a pull request's head is compared as its pull request is (see _check);
        # a commit checked on push is compared with its first parent.
        return CheckRequest(
            _handle(event.repo, event.installation_id),
            event.head_sha,
            None,
            (),
            delivery_id,
            compare_with_parent=True,
            rerequested_pulls=event.pull_numbers,
        )
    return None
