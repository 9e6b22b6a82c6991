"""Prometheus metrics of one web app: its own registry, so apps (and tests) never share state."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from bot.state.outcomes import FORGES, Unposted

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _QueueCollector(Collector):
    """Queue depth and jobs by state as looked up for this scrape (the queue is read off the
    event loop, so the values are handed in rather than read here), and the spool's
    quarantine count."""

    def __init__(self, quarantined: Callable[[], int]) -> None:
        self.depth = -1
        self.states: Mapping[str, int] = {}
        self.unposted: Mapping[tuple[str, str], int] | None = None  # None: not known now
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
        yield CounterMetricFamily(
            "ichor_spool_quarantined",
            "Spool files that could not be read back, moved to the quarantine folder",
            self._quarantined(),
        )


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
    ) -> bytes:
        """``unposted``: the jobs that ended unposted, by (forge, reason); None when the store
        could not be read (the counter is left out rather than shown reset to zero)."""
        self._queue.depth, self._queue.states = depth, states
        self._queue.unposted = unposted
        return generate_latest(self.registry)
