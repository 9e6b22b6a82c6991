"""Prometheus metrics of one web app: its own registry, so apps (and tests) never share state."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _QueueCollector(Collector):
    """Queue depth and jobs by state, read from the queue at scrape time."""

    def __init__(self, depth: Callable[[], int], states: Callable[[], dict[str, int]]) -> None:
        self._depth = depth
        self._states = states

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily("ichor_queue_depth", "Jobs waiting in the queue", self._depth())
        jobs = GaugeMetricFamily("ichor_jobs", "Jobs by state", labels=["state"])
        for state, count in sorted(self._states().items()):
            jobs.add_metric([state], count)
        yield jobs


class Metrics:
    def __init__(self, depth: Callable[[], int], states: Callable[[], dict[str, int]]) -> None:
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
        self.registry.register(_QueueCollector(depth, states))

    def render(self) -> bytes:
        return generate_latest(self.registry)
