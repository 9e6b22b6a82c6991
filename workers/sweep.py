"""The sweep (design.md 7): a job a worker queues at start-up and every
``ICHOR_RECONCILE_INTERVAL`` seconds (one worker of all: :mod:`bot.queueing.worker`), so that
no delivery is missed for good. For each forge the bot can post to: GitHub's deliveries that
never reached the bot are asked for again (:mod:`workers.redeliver`), then the open pull
requests of its repositories are reconciled (:mod:`workers.reconcile`). Each forge's run, and
each repository's, is kept for the status page and counted for ``/metrics``
(:mod:`bot.state.sweeps`). A forge that fails does not stop the others.
"""

from __future__ import annotations

import logging
from typing import Any

from bot.errors import ForgeError, PermanentForgeError
from bot.forges.base import Reconciling
from bot.settings import forge_setups
from bot.state.sweeps import SweepRun
from workers.context import WorkerContext, installed
from workers.reconcile import RunBudget, reconcile
from workers.redeliver import Redelivered, Redelivering, redeliver

log = logging.getLogger("ichor.sweep")
Summary = dict[str, Any]


def sweep_job() -> Summary:
    """The RQ entry point (``bot.queueing.base.SWEEP_FUNCTION``)."""
    return run_sweep(installed())


def run_sweep(context: WorkerContext) -> Summary:
    settings = context.settings
    if context.sweeps is None or context.queue is None:
        log.info("no sweep here: it runs beside the Redis queue")
        return {"sweep": "off"}
    budget = RunBudget(settings.reconcile_checks, context.clock() + settings.reconcile_seconds)
    summary: Summary = {}
    for setup in forge_setups(settings):
        if setup.posts:
            summary[setup.forge] = sweep_forge(context, setup.forge, budget)
    return summary


def sweep_forge(context: WorkerContext, forge: str, budget: RunBudget) -> Summary:
    store = context.sweeps
    assert store is not None
    run = SweepRun(context.clock(), forge)
    redelivered = Redelivered()
    try:
        adapter = context.adapter_for(forge, "").forge
        if isinstance(adapter, Redelivering):
            redelivered = redeliver(context, forge, adapter)
        if isinstance(adapter, Reconciling):
            done = reconcile(context, forge, adapter, budget, redelivering=redelivered.repositories)
            run = SweepRun(
                run.at,
                forge,
                repositories=done.repositories,
                reconciled=done.reconciled,
                deferred=done.deferred,
                queued=done.queued,
            )
    except (ForgeError, PermanentForgeError) as exc:
        log.warning("the sweep of %s failed: %s", forge, exc)
        run = SweepRun(run.at, forge, problem=str(exc))
        store.count(forge, "failed")
    run = SweepRun(
        run.at,
        forge,
        run.repositories,
        run.reconciled,
        run.deferred,
        run.queued,
        redelivered.failed,
        redelivered.asked,
        redelivered.left,
        run.problem,
    )
    store.record_run(run)
    log.info(
        "sweep of %s: %d repositories listed, %d looked at, %d left for later, %d checks "
        "queued; %d failed deliveries, %d asked for again",
        forge,
        run.repositories,
        run.reconciled,
        run.deferred,
        run.queued,
        run.failed_deliveries,
        run.redelivered,
    )
    return {
        "repositories": run.repositories,
        "reconciled": run.reconciled,
        "deferred": run.deferred,
        "queued": run.queued,
        "redelivered": run.redelivered,
        **({"problem": run.problem} if run.problem else {}),
    }
