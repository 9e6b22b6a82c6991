"""What a check needs from a worker's context: the services, and whether the job ran before.

Shared by the check job and the command jobs (``/recheck`` and ``/approve`` run the check).
"""

from __future__ import annotations

import logging

from bot.checks.pipeline import CheckServices
from bot.checks.request import CheckRequest, MergeBase, Rerun, pull_request
from bot.forges.buckets import rate_bucket
from bot.repos import RepoRef
from workers.context import Adapter, WorkerContext

log = logging.getLogger("ichor.jobs")


def ran_before(context: WorkerContext) -> bool:
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


def check_services(
    context: WorkerContext, adapter: Adapter, forge: str, *, resume: bool
) -> CheckServices:
    def resolve(request: CheckRequest) -> CheckRequest:
        return pull_of_rerun(adapter, forge, request)

    def can_wait(repo: RepoRef) -> bool:
        return context.can_wait(adapter.forge.name, rate_bucket(repo))

    settings = context.settings
    return CheckServices(
        adapter.forge,
        adapter.open_tree,
        heads=context.state.heads,
        cache=context.cache,
        registries=context.registries,
        reports=context.reports,
        summary_comment=adapter.summary_comment,
        details_url=settings.public_url,
        line_comments=settings.line_comments,
        line_comment_limit=settings.line_comment_limit,
        can_wait=can_wait,
        memory=context.state.line_comments,
        history=context.history,
        approvals=context.state.approvals,
        shown=context.state.shown,
        resume=resume,
        resolve=resolve,
    )


def pull_of_rerun(adapter: Adapter, forge: str, request: CheckRequest) -> CheckRequest:
    """A re-requested check of a pull request's head is compared as its pull request is."""
    if not isinstance(request.baseline, Rerun):
        return request
    for number in request.baseline.pulls:
        pull = adapter.forge.get_pull_request(request.repo, number)
        if pull.head_sha == request.head_sha and pull.base_sha and pull.base_ref:
            return pull_request(
                request.repo,
                request.head_sha,
                MergeBase(pull.base_sha, pull.base_ref),
                number,
                forge=forge,
                external_id=request.external_id,
                pull_head_ref=adapter.forge.pull_head_ref,
                author=pull.author,
                branch=pull.head_ref,
            )
    return request
