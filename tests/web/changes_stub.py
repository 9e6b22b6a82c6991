"""The web app with a stub queue, for the change API's tests: nothing runs, each job's answer
is what the test says it is (by default: a pull request opened for the request)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from bot.queueing.base import Outcome, QueuedDelivery
from bot.settings import Settings
from bot.state.memory import MemoryAudit
from bot.web.app import create_app

TOKENS = "ui=ui-token-0123456789abcdef,cli=cli-token-0123456789abcdef,ops=ops-token-0123456789ab"
UI = "ui-token-0123456789abcdef"
CLI = "cli-token-0123456789abcdef"
Respond = Callable[[dict[str, Any]], Any]  # the queued event → the job's summary


def opened(event: dict[str, Any]) -> dict[str, Any]:
    """A job that opened the pull request (its branch named after the object)."""
    namespace = event["namespace"] or "_cluster"
    return {
        "request": event["request"],
        "result": "pr-opened",
        "pull_request_url": "https://github.example/o/r/pull/1",
        "branch": f"ichor/{event['verb']}-{namespace}-{event['name']}",
        "created": True,
        "reason": None,
    }


class StubQueue:
    """:class:`bot.queueing.base.DeliveryQueue` that runs nothing. A delivery seen before is a
    duplicate (its first answer stands); ``state`` is what every job reports."""

    def __init__(self, respond: Respond = opened, state: str = "finished") -> None:
        self.respond = respond
        self.state = state
        self.submitted: list[QueuedDelivery] = []
        self.outcomes: list[Outcome] = []
        self._results: dict[str, Any] = {}

    def submit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]:
        outcomes = []
        for delivery in deliveries:
            self.submitted.append(delivery)
            if delivery.job_id in self._results:
                outcomes.append(Outcome.DUPLICATE)
            else:
                self._results[delivery.job_id] = self.respond(delivery.event)
                outcomes.append(Outcome.QUEUED)
        self.outcomes += outcomes
        return outcomes

    async def asubmit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]:
        return self.submit_many(deliveries)

    def job_state(self, job_id: str) -> str | None:
        return self.state if job_id in self._results else None

    def job_result(self, job_id: str) -> Any:
        return self._results.get(job_id)

    def depth(self) -> int:
        return 0

    def states(self) -> dict[str, int]:
        return {}

    def ping(self) -> bool:
        return True

    def close(self) -> None:
        pass

    @property
    def jobs(self) -> list[str]:
        return sorted(self._results)


@contextlib.contextmanager
def api_client(
    tmp_path: Path, queue: StubQueue | None = None, **overrides: Any
) -> Iterator[tuple[TestClient, StubQueue, MemoryAudit]]:
    """The app (lifespan run) on ``queue``; ``overrides`` are settings."""
    stub = queue or StubQueue()
    audit = MemoryAudit()
    values: dict[str, Any] = {
        "redis_url": None,
        "data_dir": tmp_path / "data",
        "api_tokens": TOKENS,
        "api_wait_seconds": 5.0,
        **overrides,
    }
    settings = Settings(**values)
    app = create_app(settings, stub, queue_kind="stub", redis_configured=False, audit=audit)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, stub, audit


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


APPROVE: dict[str, Any] = {
    "forge": "github",
    "repository": "octo/gitops",
    "verb": "approve",
    "object": {"kind": "ConfigMap", "namespace": "web", "name": "settings"},
    "fields": {"data.mode": "canary"},
    "requester": "maria",
}
CREATE: dict[str, Any] = {
    "forge": "github",
    "repository": "octo/gitops",
    "target": "prod",
    "verb": "create",
    "document": {
        "apiVersion": "talos.dev/v1",
        "kind": "TalosMachine",
        "metadata": {"name": "node-2"},
        "spec": {"approvalState": "approved", "role": "worker"},
    },
}
