"""How each job ended, kept for the status page and ``/metrics`` (:mod:`bot.state.outcomes`).

A job's result is what it was asked to put on the forge: a check's verdict, or the error check
that stands in for it, a command's reply. :func:`run_watched` keeps one outcome per run of a
job: posted, done, silent (nothing to post), or not posted and why. A job that ends for good
without posting its result fails in the queue, without the queue's retries (they cannot fix a
setting): so the job shows failed, and a redelivery after the fix runs it again. One that
raised is left to the queue as before; its outcome says whether anything reached the forge.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

from bot.checks.pipeline import CheckHistory
from bot.errors import ForgeStatusError, IchorError, PermanentForgeError, TransientForgeError
from bot.forges.base import CheckOutput
from bot.queueing.base import JobEndedError, job_id_of
from bot.repos import RepoRef
from bot.state.check_facts import CheckFacts, JobRun
from bot.state.outcomes import JobOutcome, Result, Unposted
from workers.context import WorkerContext

log = logging.getLogger("ichor.jobs")
Summary = dict[str, Any]
_GONE = (404, 410)


class NotPostedError(JobEndedError):
    """A job ended for good without posting its result; the text says why."""


class PostWatch:
    """A job's view of the check history: each posted check goes on to the status page's
    history, and the job learns that its result reached the forge, also when it then raised."""

    def __init__(self, history: CheckHistory, run: JobRun | None = None) -> None:
        self.history = history
        self.run = run
        self.posted: CheckOutput | None = None

    def record(
        self,
        forge: str,
        repo: RepoRef,
        number: int | None,
        delivery_id: str,
        head_sha: str,
        output: CheckOutput,
        *,
        facts: CheckFacts | None = None,
        run: JobRun | None = None,
    ) -> None:
        self.posted = output
        self.history.record(
            forge, repo, number, delivery_id, head_sha, output, facts=facts, run=run or self.run
        )


def unposted_kind(exc: BaseException) -> Unposted:
    """Why nothing could be posted, from what kept it from the forge (bounded: a label)."""
    if isinstance(exc, ForgeStatusError):
        return Unposted.UNRESOLVED if exc.status in _GONE else Unposted.REFUSED
    if isinstance(exc, TransientForgeError):
        return Unposted.UNREACHABLE
    if isinstance(exc, PermanentForgeError):
        # Refused before any request: a delivery without an installation, a name or clone URL
        # the forge's API cannot address.
        return Unposted.UNRESOLVED
    return Unposted.ERROR


def not_posted(kind: Unposted, reason: str) -> Summary:
    """What a job puts in its summary when it ends without posting its result."""
    return {"not_posted": {"kind": kind.value, "reason": reason}}


def reason_of(exc: BaseException) -> str:
    if isinstance(exc, IchorError):
        return str(exc)
    return f"internal error ({type(exc).__name__}); the bot's log has the details"


def _current_job() -> Any:
    from rq import get_current_job

    return get_current_job()


def will_retry() -> bool:
    """Whether the queue runs this job again when it raises (RQ's retries; never in-process)."""
    job = _current_job()
    return job is not None and bool(job.should_retry)


def _no_retry() -> None:
    job = _current_job()
    if job is not None:
        job.retries_left = 0  # RQ reads it when the job fails, on this same Job object


def _retry_no_sooner_than(seconds: float) -> None:
    """The queue's next try of this job waits at least ``seconds``: the wait the forge named
    (``Retry-After``, a rate limit's reset) and the request seam would not sleep out."""
    job = _current_job()
    intervals = getattr(job, "retry_intervals", None)
    if job is None or not intervals:
        return
    # RQ reads the intervals from this same Job object when it schedules the retry.
    job.retry_intervals = [max(int(i), math.ceil(seconds)) for i in intervals]


def run_watched(
    context: WorkerContext,
    forge: str,
    delivery_id: str,
    repository: str,
    job: Callable[[WorkerContext], Summary],
    *,
    job_id: str | None = None,
) -> Summary:
    """Run ``job`` and keep how it ended, under ``job_id`` (the delivery's own job by default);
    a job that ended for good without posting its result raises :class:`NotPostedError` (the
    queue then marks it failed)."""
    job_id = job_id or job_id_of(forge, delivery_id)
    # The check it posts is filed under the delivery's forge, with when the job started.
    watch = PostWatch(context.history, JobRun(forge, job_id, context.clock()))

    def outcome(result: Result, detail: str = "", kind: str = "", final: bool = True) -> None:
        ended = JobOutcome(time.time(), job_id, forge, result, detail, kind, final, repository)
        _keep(context, ended)

    try:
        summary = job(context.with_history(watch))
    except Exception as exc:
        if watch.posted is not None:
            outcome(Result.POSTED, _verdict(watch.posted))
        else:
            outcome(Result.NOT_POSTED, reason_of(exc), unposted_kind(exc), not will_retry())
        if isinstance(exc, TransientForgeError) and exc.retry_after is not None:
            _retry_no_sooner_than(exc.retry_after)
        raise
    unposted = summary.get("not_posted")
    if isinstance(unposted, dict):
        reason, kind = str(unposted.get("reason", "")), str(unposted.get("kind", Unposted.ERROR))
        outcome(Result.NOT_POSTED, reason, kind)
        _no_retry()
        raise NotPostedError(f"{forge} delivery {delivery_id}: nothing was posted: {reason}")
    if watch.posted is not None:
        outcome(Result.POSTED, _verdict(watch.posted))
    elif summary.get("handled") and "silent" not in summary:
        outcome(Result.DONE, _said(summary))
    else:
        outcome(Result.SILENT, str(summary.get("silent") or summary.get("why") or ""))
    return summary


def _said(summary: Summary) -> str:
    """What came of a job that posts no check: a command's results, the change API's."""
    results = summary.get("results")
    if isinstance(results, list):
        return "; ".join(str(r) for r in results)
    if "result" in summary:
        reason = summary.get("reason")
        return f"{summary['result']}: {reason}" if reason else str(summary["result"])
    return ""


def _verdict(output: CheckOutput) -> str:
    return f"{output.conclusion.value}: {output.title}"


def _keep(context: WorkerContext, outcome: JobOutcome) -> None:
    """One small write; never fatal to the job (the forge has, or has not, its result)."""
    if context.outcomes is None:
        return
    try:
        context.outcomes.add(outcome)
    except Exception as exc:
        log.warning("could not keep how job %s ended for the status page: %s", outcome.job_id, exc)
