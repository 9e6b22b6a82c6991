"""GitHub's deliveries that never reached the bot, asked for again (design.md 7): part of the
sweep (:mod:`workers.sweep`), before the reconciler.

GitHub keeps the App's recent deliveries with the status each attempt was answered. Those no
attempt of which reached the bot (it was down, or answered 503), first tried within
``ICHOR_REDELIVERY_WINDOW``, are asked for again — unless the bot took them after all (the
queue's dedupe marker of the delivery's GUID, which a redelivery keeps: the web answered too
late for GitHub, say), or they were asked for lately, or tried ``ICHOR_REDELIVERY_ATTEMPTS``
times in all. At most ``ICHOR_REDELIVERY_LIMIT`` a run, and none while the App's rate limit
runs low. A redelivery arrives as any delivery does, through the web process.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from bot.errors import ForgeError
from bot.forges.buckets import APP_BUCKET
from bot.forges.github.redelivery import HookDelivery, failed, plan
from bot.queueing.base import job_id_of
from workers.context import WorkerContext

log = logging.getLogger("ichor.sweep")

MAX_PAGES = 10  # of the App's deliveries listed, a hundred each
RATE_LIMITED = "rate limit low"


@runtime_checkable
class Redelivering(Protocol):
    """An adapter whose forge keeps its webhook's deliveries and delivers one again (GitHub)."""

    def recent_deliveries(self, *, since: float, max_pages: int) -> Sequence[HookDelivery]: ...

    def redeliver(self, delivery_id: int) -> None: ...


@dataclass(slots=True)
class Redelivered:
    """What one run did: failed deliveries found, asked for again, refused by GitHub, the rest
    by reason, and the repositories (GitHub ids) a redelivery is on its way to."""

    failed: int = 0
    asked: int = 0
    refused: int = 0
    left: dict[str, int] = field(default_factory=dict)
    repositories: set[str] = field(default_factory=set)


def redeliver(context: WorkerContext, forge: str, adapter: Redelivering) -> Redelivered:
    settings, store, queue = context.settings, context.sweeps, context.queue
    assert store is not None and queue is not None  # the sweep runs only with both
    done = Redelivered()
    if not context.can_wait(forge, APP_BUCKET):
        done.left[RATE_LIMITED] = 1
        return done
    since = context.clock() - settings.redelivery_window
    found = failed(adapter.recent_deliveries(since=since, max_pages=MAX_PAGES), since=since)
    done.failed = len(found)
    job_ids = {f.guid: job_id_of(forge, f.guid) for f in found}
    taken = queue.seen(list(job_ids.values()))
    chosen = plan(
        found,
        processed={guid for guid, job in job_ids.items() if job in taken},
        asked=store.asked(list(job_ids)),
        max_attempts=settings.redelivery_attempts,
        limit=settings.redelivery_limit,
    )
    done.left = dict(chosen.left)
    # Not asked again before GitHub has had time to try (its next attempt is then listed).
    ttl = max(60, int(settings.reconcile_interval) // 2)
    for n, delivery in enumerate(chosen.ask):
        if not context.can_wait(forge, APP_BUCKET):
            done.left[RATE_LIMITED] = len(chosen.ask) - n
            break
        newest = delivery.newest
        try:
            adapter.redeliver(newest.id)
        except ForgeError as exc:
            done.refused += 1
            log.warning("GitHub delivery %s could not be asked for again: %s", delivery.guid, exc)
            continue
        store.remember_asked(delivery.guid, ttl)
        done.asked += 1
        if newest.repository_id is not None:
            done.repositories.add(str(newest.repository_id))
        log.info(
            "asked GitHub to deliver %s again (%s, tried %d times, first %d s ago)",
            delivery.guid,
            newest.event,
            delivery.attempts,
            int(context.clock() - delivery.first_at),
        )
    store.count(forge, "redelivered", done.asked)
    store.count(forge, "redelivery-refused", done.refused)
    return done
