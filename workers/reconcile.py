"""The reconciler (design.md 7): part of the sweep (:mod:`workers.sweep`). For each repository
the bot can post to, its open pull requests are listed and each head without a result gets a
check queued, as its lost webhook would have; whether a head needs one is
:func:`bot.reconcile.heads.judge`'s.

Bounded: the repositories looked at least lately first, at most ``ICHOR_RECONCILE_REPOSITORIES``
a forge and ``ICHOR_RECONCILE_PULLS`` pull requests each, ``ICHOR_RECONCILE_CHECKS`` checks
queued and ``ICHOR_RECONCILE_SECONDS`` a run (the rest is the next run's); a repository whose
rate limit runs low is left for later. On GitHub the listing is a conditional request (its
ETag kept with the listing): when nothing changed GitHub answers 304, which costs no rate
limit, and the listing kept is judged again. A repository a GitHub redelivery was just asked
for is left to that delivery until the next run.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field

from bot.errors import ForgeError
from bot.forges.base import HeadCheck, PullRequestRef, Reconciling
from bot.forges.buckets import rate_bucket
from bot.forges.local import repository_path
from bot.queueing.base import QueuedDelivery
from bot.reconcile.events import EVENT_NAME, change_request, delivery_id
from bot.reconcile.heads import HeadFacts, Verdict, forge_asked, judge
from bot.repos import RepoRef
from bot.state.base import pull_key
from bot.state.history import DeliveryEntry
from bot.state.sweeps import Listing, RepoReconciled
from bot.webhooks import event_to_dict
from workers.context import WorkerContext

log = logging.getLogger("ichor.sweep")

LISTED = 1000  # repositories listed a run, of which the least lately looked at are taken
QUEUED_REASON = "the reconciler found no result on this head"
RATE_LIMITED = "left for later: the rate limit runs low"
REDELIVERING = "left to the GitHub redelivery asked for; looked at next run"
OUT_OF_TIME = "left for the next run: this run's time is up"


@dataclass(slots=True)
class RunBudget:
    """What one sweep may still do, across forges."""

    checks: int
    deadline: float

    def out_of_time(self, now: float) -> bool:
        return now >= self.deadline


@dataclass(slots=True)
class Reconciled:
    repositories: int = 0  # listed
    reconciled: int = 0  # looked at
    deferred: int = 0  # left for the rate budget, or for time
    queued: int = 0
    records: list[RepoReconciled] = field(default_factory=list)


def reconcile(
    context: WorkerContext,
    forge: str,
    adapter: Reconciling,
    budget: RunBudget,
    *,
    redelivering: Collection[str] = (),
) -> Reconciled:
    """Look at the repositories of ``forge`` due for it; ``redelivering``: GitHub repository
    ids a redelivery is on its way to."""
    settings, store = context.settings, context.sweeps
    assert store is not None
    done = Reconciled()
    listed = [r for r in adapter.repositories(limit=LISTED) if not _local(context, r)]
    done.repositories = len(listed)
    last = store.last_reconciled(forge, [r.full_name for r in listed])
    due = sorted(listed, key=lambda r: (last.get(r.full_name, 0.0), r.full_name))
    for repo in due[: settings.reconcile_repositories]:
        now = context.clock()
        note = ""
        if budget.out_of_time(now):
            note = OUT_OF_TIME
        elif repo.id is not None and repo.id in redelivering:
            note = REDELIVERING
        elif not context.can_wait(forge, rate_bucket(repo)):
            note = RATE_LIMITED
        if note:
            if note != REDELIVERING:
                done.deferred += 1
            done.records.append(RepoReconciled(now, forge, repo.full_name, note=note))
            continue
        try:
            record = reconcile_repository(context, forge, adapter, repo, budget)
        except ForgeError as exc:
            log.warning("reconciling %s %s failed: %s", forge, repo.full_name, exc)
            record = RepoReconciled(now, forge, repo.full_name, note=f"failed: {exc}")
            store.count(forge, "failed")
        done.reconciled += 1
        done.queued += record.queued
        done.records.append(record)
    for record in done.records:
        store.record_repo(record)
    store.count(forge, "queued", done.queued)
    store.count(forge, "deferred", done.deferred)
    return done


def _local(context: WorkerContext, repo: RepoRef) -> bool:
    """A repository under ICHOR_LOCAL_REPOS is checked on disk, never on its forge."""
    root = context.settings.local_repos
    return root is not None and repository_path(root, repo.full_name) is not None


def reconcile_repository(
    context: WorkerContext,
    forge: str,
    adapter: Reconciling,
    repo: RepoRef,
    budget: RunBudget,
) -> RepoReconciled:
    settings, store = context.settings, context.sweeps
    assert store is not None
    kept = store.listing(forge, repo.full_name) or Listing()
    listed = adapter.open_pull_requests(repo, limit=settings.reconcile_pulls, tag=kept.tag)
    pulls = kept.pulls if listed.unchanged else listed.pulls
    now = context.clock()
    counts = {"done": 0, "waiting": 0, "queued": 0, "left": 0}
    waiting: dict[int, tuple[str, float]] = {}
    note = f"over {settings.reconcile_pulls} open: the most recently updated" if listed.more else ""
    for pull in pulls:
        sha = pull.head_sha
        if not sha:
            continue
        if not context.can_wait(forge, rate_bucket(repo)):
            counts["left"] += 1
            note = RATE_LIMITED
            continue
        before = kept.waiting.get(pull.number)
        since = before[1] if before is not None and before[0] == sha else None
        verdict = _judge(context, forge, adapter, repo, pull, sha, since, now)
        if verdict is Verdict.DONE:
            counts["done"] += 1
        elif verdict is Verdict.WAIT:
            counts["waiting"] += 1
            waiting[pull.number] = (sha, since if since is not None else now)
        elif budget.checks <= 0:
            counts["left"] += 1  # judged again next run, and queued then
        elif _queue(context, forge, repo, pull, now):
            budget.checks -= 1
            counts["queued"] += 1
            waiting[pull.number] = (sha, now)  # a job has it now
        else:
            counts["waiting"] += 1  # queued already (by an earlier run)
            waiting[pull.number] = (sha, since if since is not None else now)
    store.keep_listing(forge, repo.full_name, Listing(listed.tag or kept.tag, pulls, waiting))
    return RepoReconciled(
        now,
        forge,
        repo.full_name,
        open=len(pulls),
        unchanged=listed.unchanged,
        note=note,
        **counts,
    )


def _judge(
    context: WorkerContext,
    forge: str,
    adapter: Reconciling,
    repo: RepoRef,
    pull: PullRequestRef,
    sha: str,
    since: float | None,
    now: float,
) -> Verdict:
    key, grace = pull_key(forge, repo.full_name, pull.number), context.settings.reconcile_grace
    state = context.state
    checked = state.checked.checked(key, sha)
    received = not checked and state.heads.latest_head(key) == sha
    facts = HeadFacts(checked, None, received, since)
    if forge_asked(facts, now=now, grace=grace):
        shown = adapter.head_check(repo, sha)
        if shown is HeadCheck.FINAL:  # the forge says so: no need to ask it again
            state.checked.remember_checked(key, sha)
        facts = HeadFacts(False, shown, received, since)
    return judge(facts, now=now, grace=grace)


def _queue(
    context: WorkerContext, forge: str, repo: RepoRef, pull: PullRequestRef, now: float
) -> bool:
    """Queue the head's check as its webhook would have; whether a new job was queued (a
    head queued by an earlier run is a duplicate, unless its job failed)."""
    queue = context.queue
    assert queue is not None
    event = change_request(repo, pull)
    if event is None:
        return False
    delivery = QueuedDelivery(
        forge,
        delivery_id(pull_key(forge, repo.full_name, pull.number), event.head_sha),
        EVENT_NAME,
        event_to_dict(event),
    )
    (outcome,) = queue.submit_many([delivery])
    fresh = outcome.value in ("queued", "requeued")
    log.info(
        "%s %s #%d at %s: no result, check %s",
        forge,
        repo.full_name,
        pull.number,
        event.head_sha[:12],
        outcome.value,
    )
    if fresh and context.deliveries is not None:
        entry = DeliveryEntry(
            now,
            forge,
            202,
            outcome.value,
            QUEUED_REASON,
            EVENT_NAME,
            repo.full_name,
            delivery.delivery_id,
            delivery.job_id,
        )
        try:
            context.deliveries.add_deliveries([entry])
        except Exception as exc:  # the check is queued; the page misses the line
            log.warning("could not list the reconciled delivery: %s", exc)
    return fresh
