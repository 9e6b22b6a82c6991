"""The status page: recent deliveries and their jobs, as plain HTML (no external assets)."""

from __future__ import annotations

import html
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class DeliveryRecord:
    at: float
    forge: str
    event: str
    repository: str
    delivery_id: str
    outcome: str
    job_id: str | None


class RecentDeliveries:
    def __init__(self, size: int = 100) -> None:
        self._items: deque[DeliveryRecord] = deque(maxlen=size)

    def add(self, record: DeliveryRecord) -> None:
        self._items.append(record)

    def __iter__(self) -> Iterator[DeliveryRecord]:
        return reversed(self._items)


class JobSource(Protocol):
    def job_state(self, job_id: str) -> str | None: ...

    def job_result(self, job_id: str) -> Any: ...

    def depth(self) -> int: ...


@dataclass
class JobLooks:
    """What the page shows of the queue, filled from a thread; what is missing is unknown."""

    depth: int = -1
    jobs: dict[str, tuple[str | None, Any]] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)

    def fill(self, queue: JobSource, job_ids: Iterable[str]) -> JobLooks:
        """Look everything up, in order, until :attr:`stop` is set (blocking: in a thread)."""
        self.depth = queue.depth()
        for job_id in job_ids:
            if self.stop.is_set():
                break
            state = queue.job_state(job_id)
            result = queue.job_result(job_id) if state == "finished" else None
            self.jobs[job_id] = (state, result)
        return self

    def state(self, job_id: str) -> str | None:
        return self.jobs.get(job_id, (None, None))[0]

    def result(self, job_id: str) -> Any:
        return self.jobs.get(job_id, (None, None))[1]


_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}th{background:#eee}"
)


def render_status(
    records: Iterable[DeliveryRecord],
    job_state: Callable[[str], str | None],
    job_result: Callable[[str], Any] | None = None,
    *,
    queue_kind: str,
    depth: int,
) -> str:
    rows = []
    for r in records:
        state = (job_state(r.job_id) if r.job_id else None) or "-"
        cells = [
            time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(r.at)),
            r.forge,
            r.event,
            r.repository,
            r.delivery_id,
            r.outcome,
            state,
            _verdict(job_result(r.job_id))
            if job_result and r.job_id and state == "finished"
            else "",
        ]
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "time (UTC)",
            "forge",
            "event",
            "repository",
            "delivery",
            "outcome",
            "job",
            "check",
        )
    )
    body = "\n".join(rows) or '<tr><td colspan="8">no deliveries yet</td></tr>'
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>Ichor Bot</title>"
        f"<style>{_STYLE}</style></head><body><h1>Ichor Bot</h1>"
        f"<p>queue: {html.escape(queue_kind)}, {depth if depth >= 0 else 'unknown'} waiting</p>"
        f"<table><tr>{head}</tr>\n{body}</table></body></html>"
    )


def _verdict(result: Any) -> str:
    """A finished job's check, in a few words: conclusion and title, or what happened."""
    check = result.get("check") if isinstance(result, dict) else None
    if not isinstance(check, dict):
        return ""
    if check.get("conclusion"):
        return f"{check['conclusion']}: {check.get('title') or ''}".strip()
    return str(check.get("status") or "")
