"""Prometheus metrics of one web app: its own registry, so apps (and tests) never share state."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _QueueCollector(Collector):
    """Queue depth and jobs by state as looked up for this scrape (the queue is read off the
    event loop, so the values are handed in rather than read here), and the spool's
    quarantine count."""

    def __init__(self, quarantined: Callable[[], int]) -> None:
        self.depth = -1
        self.states: Mapping[str, int] = {}
        self._quarantined = quarantined

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        yield GaugeMetricFamily(
            "ichor_queue_depth", "Jobs waiting in the queue (-1: unknown)", self.depth
        )
        jobs = GaugeMetricFamily("ichor_jobs", "Jobs by state", labels=["state"])
        for state, count in sorted(self.states.items()):
            jobs.add_metric([state], count)
        yield jobs
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

    def render(self, depth: int, states: Mapping[str, int]) -> bytes:
        self._queue.depth, self._queue.states = depth, states
        return generate_latest(self.registry)
