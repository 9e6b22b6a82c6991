"""Real parts for the web tests: uvicorn on loopback, Redis (the machine's, or one of our own)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import redis
import uvicorn

from bot.queueing.base import DeliveryQueue
from bot.queueing.inprocess import InProcessDeliveryQueue
from bot.queueing.redis_queue import RedisDeliveryQueue, marker_key
from bot.replay import signed_headers
from bot.settings import Settings
from bot.web.app import create_app
from tests.conftest import FIXTURES

SHARED_REDIS = "redis://127.0.0.1:6379/0"
SECRETS = {"github": "gh-secret", "gitlab": "gl-secret", "gitea": "gt-secret"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class OwnRedis:
    """A redis-server of the test's own, on a free port: it may be stopped and started."""

    port: int
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        exe = shutil.which("redis-server")
        assert exe, "redis-server is needed"
        self.proc = subprocess.Popen(
            [
                exe,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port)
        for _ in range(200):
            with contextlib.suppress(redis.exceptions.ConnectionError):
                if client.ping():
                    return
            time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    server = OwnRedis(free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Running:
    url: str
    settings: Settings
    queue: DeliveryQueue
    app: object

    def post(
        self,
        forge: str,
        fixture: str,
        *,
        delivery: str | None = None,
        secret: str | None = None,
        event: str | None = None,
        body: bytes | None = None,
    ) -> httpx.Response:
        route = "gitea" if forge == "forgejo" else forge
        data = body if body is not None else (FIXTURES / "webhooks" / route / fixture).read_bytes()
        name = event or fixture.split("__")[0]
        headers = signed_headers(
            forge, data, name, secret or SECRETS[route], delivery or str(uuid.uuid4())
        )
        headers["Content-Type"] = "application/json"
        return httpx.post(f"{self.url}/webhooks/{route}", content=data, headers=headers, timeout=30)


Serve = Callable[..., Running]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    servers: list[tuple[uvicorn.Server, threading.Thread, DeliveryQueue]] = []

    def start(redis_url: str | None = SHARED_REDIS, **overrides: object) -> Running:
        values: dict[str, object] = {
            "redis_url": redis_url,
            "data_dir": tmp_path / f"data-{len(servers)}",
            "github_webhook_secret": SECRETS["github"],
            "gitlab_webhook_secret": SECRETS["gitlab"],
            "gitea_webhook_secret": SECRETS["gitea"],
            "queue_name": f"test-{uuid.uuid4().hex[:12]}",
        }
        settings = Settings(**{**values, **overrides})  # type: ignore[arg-type]
        queue: DeliveryQueue = (
            RedisDeliveryQueue(redis_url, settings.queue_name)
            if redis_url
            else InProcessDeliveryQueue()
        )
        app = create_app(
            settings,
            queue,
            queue_kind="redis" if redis_url else "in-process",
            redis_configured=bool(redis_url),
        )
        port = free_port()
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        for _ in range(500):
            if server.started:
                break
            time.sleep(0.01)
        servers.append((server, thread, queue))
        return Running(f"http://127.0.0.1:{port}", settings, queue, app)

    yield start
    for server, thread, queue in servers:
        server.should_exit = True
        thread.join(timeout=10)
        if isinstance(queue, RedisDeliveryQueue):
            _clean(queue)
        queue.close()


def _clean(queue: RedisDeliveryQueue) -> None:
    """Leave the shared Redis as we found it: this test's queue, jobs, registries, markers."""
    with contextlib.suppress(redis.exceptions.ConnectionError):
        client = queue.redis
        job_ids = set(queue.queue.job_ids)
        for registry in (
            queue.queue.finished_job_registry,
            queue.queue.failed_job_registry,
            queue.queue.started_job_registry,
            queue.queue.scheduled_job_registry,
            queue.queue.deferred_job_registry,
        ):
            job_ids.update(registry.get_job_ids())
        keys = [f"rq:{kind}:{j}" for j in job_ids for kind in ("job", "results")]
        keys += [marker_key(j) for j in job_ids]
        keys += list(client.scan_iter(match=f"rq:*:{queue.queue.name}*"))
        keys += list(client.scan_iter(match=f"rq:*:{queue.queue.name}"))
        keys += list(client.scan_iter(match=f"ichor:history:{queue.queue.name}:*"))
        if keys:
            client.delete(*keys)
        client.srem("rq:queues", queue.queue.key)
