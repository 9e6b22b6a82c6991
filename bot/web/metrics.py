"""Prometheus metrics of one web app: its own registry, so apps (and tests) never share state."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from bot.state.outcomes import FORGES, Unposted
from bot.state.rates import RateBudget
from bot.state.sweeps import SweepRun

# The forges a sweep runs on (the local forge has none).
SWEPT = ("github", "gitlab", "gitea")


@dataclass(frozen=True, slots=True)
class Upkept:
    """What /metrics shows of the rate budget and the sweeps, as read for one scrape."""

    rates: Sequence[RateBudget]
    counts: Mapping[tuple[str, str], int]
    runs: Sequence[SweepRun]


CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _QueueCollector(Collector):
    """Queue depth and jobs by state as looked up for this scrape (the queue is read off the
    event loop, so the values are handed in rather than read here), and the spool's
    quarantine count."""

    def __init__(self, quarantined: Callable[[], int]) -> None:
        self.depth = -1
        self.states: Mapping[str, int] = {}
        self.unposted: Mapping[tuple[str, str], int] | None = None  # None: not known now
        self.upkept: Upkept | None = None  # None: not known now
        self._quarantined = quarantined

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        yield GaugeMetricFamily(
            "ichor_queue_depth", "Jobs waiting in the queue (-1: unknown)", self.depth
        )
        jobs = GaugeMetricFamily("ichor_jobs", "Jobs by state", labels=["state"])
        for state, count in sorted(self.states.items()):
            jobs.add_metric([state], count)
        yield jobs
        if self.unposted is not None:
            # Every forge and reason, zeros too, so a rate over the counter starts at once.
            unposted = CounterMetricFamily(
                "ichor_jobs_unposted",
                "Jobs that ended without posting their result on the forge, by forge and reason",
                labels=["forge", "reason"],
            )
            counts = self.unposted
            for forge in FORGES:
                for reason in Unposted:
                    unposted.add_metric([forge, reason.value], counts.get((forge, reason), 0))
            yield unposted
        if self.upkept is not None:
            yield from _upkeep(self.upkept)
        yield CounterMetricFamily(
            "ichor_spool_quarantined",
            "Spool files that could not be read back, moved to the quarantine folder",
            self._quarantined(),
        )


def _upkeep(upkept: Upkept) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
    labels = ["forge", "bucket"]
    remaining = GaugeMetricFamily(
        "ichor_rate_limit_remaining",
        "Requests left in a rate limit's window, as the forge last said (bucket: an "
        "installation, the app, or the token)",
        labels=labels,
    )
    limit = GaugeMetricFamily(
        "ichor_rate_limit", "Requests a rate limit's window allows", labels=labels
    )
    reset = GaugeMetricFamily(
        "ichor_rate_limit_reset_timestamp_seconds",
        "When a rate limit's window resets",
        labels=labels,
    )
    for budget in upkept.rates:
        names = [budget.forge, budget.shown]
        remaining.add_metric(names, budget.remaining)
        if budget.limit is not None:
            limit.add_metric(names, budget.limit)
        if budget.reset is not None:
            reset.add_metric(names, budget.reset)
    yield from (remaining, limit, reset)
    counters = (
        ("queued", "ichor_reconcile_checks_queued", "Checks the reconciler queued"),
        (
            "deferred",
            "ichor_reconcile_deferred",
            "Repositories the reconciler left for a later run (rate budget, time)",
        ),
        ("failed", "ichor_sweep_failures", "Sweeps or repositories whose forge requests failed"),
    )
    for what, name, text in counters:
        counter = CounterMetricFamily(name, text, labels=["forge"])
        for forge in SWEPT:
            counter.add_metric([forge], upkept.counts.get((forge, what), 0))
        yield counter
    redelivered = CounterMetricFamily(
        "ichor_redeliveries",
        "GitHub deliveries that never reached the bot, asked for again (asked) or refused",
        labels=["result"],
    )
    redelivered.add_metric(["asked"], upkept.counts.get(("github", "redelivered"), 0))
    redelivered.add_metric(["refused"], upkept.counts.get(("github", "redelivery-refused"), 0))
    yield redelivered
    last = GaugeMetricFamily(
        "ichor_sweep_last_run_timestamp_seconds", "When each forge was last swept", labels=["forge"]
    )
    for run in upkept.runs:
        last.add_metric([run.forge], run.at)
    yield last


class Metrics:
    def __init__(self, quarantined: Callable[[], int] = lambda: 0) -> None:
        self.registry = CollectorRegistry()
        self.deliveries = Counter(
            "ichor_webhook_deliveries",
            "Webhook deliveries by forge, event and outcome",
            ["forge", "event", "outcome"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "ichor_webhook_ingress_seconds",
            "Time from request to answer for webhook deliveries",
            ["forge"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
            registry=self.registry,
        )
        self._queue = _QueueCollector(quarantined)
        self.registry.register(self._queue)

    def render(
        self,
        depth: int,
        states: Mapping[str, int],
        unposted: Mapping[tuple[str, str], int] | None = None,
        upkept: Upkept | None = None,
    ) -> bytes:
        """``unposted``: the jobs that ended unposted, by (forge, reason); None when the store
        could not be read (the counter is left out rather than shown reset to zero); the
        same for ``upkept``, the rate limits and the sweeps."""
        self._queue.depth, self._queue.states = depth, states
        self._queue.unposted = unposted
        self._queue.upkept = upkept
        return generate_latest(self.registry)
