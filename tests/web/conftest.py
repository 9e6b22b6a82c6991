"""Real parts for the web tests: uvicorn on loopback, Redis (the machine's, or one of our own)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
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

from bot.cli.processes import in_process_queue
from bot.cli.replay import signed_headers
from bot.queueing.base import DeliveryQueue
from bot.queueing.redis_queue import RedisDeliveryQueue, marker_key
from bot.settings import Settings
from bot.web.app import create_app
from tests.conftest import FIXTURES
from tests.support.forkserver import Process, popen_ichor_bot
from tests.support.redis_url import SHARED_REDIS_URL
from tests.support.waiting import wait_until

SHARED_REDIS = SHARED_REDIS_URL
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
        try:
            wait_until(client.ping, "redis-server started")
        finally:
            client.close()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)  # a paused server cannot act on SIGTERM
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None

    def pause(self) -> None:
        """Hang it (SIGSTOP): connections are accepted by the kernel, nothing is answered."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
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


def started_within(server: uvicorn.Server, thread: threading.Thread, bound: float = 60) -> None:
    """Until uvicorn says it started (it has no event to wait on). The bound only stops a
    server that will never start; a loaded machine may take seconds."""
    deadline = time.monotonic() + bound
    while not server.started:
        assert thread.is_alive(), "uvicorn stopped before it started"
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)


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
            else in_process_queue(settings)
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
        started_within(server, thread)
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


BIN = Path(sys.executable).parent


@dataclass
class ServeProcess:
    """A real ``ichor-bot serve`` process on loopback."""

    port: int
    proc: Process
    data_dir: Path
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def post(
        self,
        fixture: str = "pull_request__opened.json",
        *,
        delivery: str | None = None,
        timeout: float = 30,
    ) -> httpx.Response:
        data = (FIXTURES / "webhooks" / "github" / fixture).read_bytes()
        headers = signed_headers(
            "github", data, fixture.split("__")[0], SECRETS["github"], delivery or str(uuid.uuid4())
        )
        headers["Content-Type"] = "application/json"
        return httpx.post(
            f"{self.url}/webhooks/github", content=data, headers=headers, timeout=timeout
        )

    def rss_peak_kib(self) -> int:
        """The process's peak resident memory (VmHWM), KiB."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise AssertionError("no VmHWM")

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")


ServeProc = Callable[..., ServeProcess]


@pytest.fixture
def serve_process(tmp_path: Path) -> Iterator[ServeProc]:
    """Start ``ichor-bot serve`` with ``ICHOR_*`` settings given as keyword arguments."""
    started: list[ServeProcess] = []

    def start(**settings: object) -> ServeProcess:
        port = free_port()
        data_dir = tmp_path / f"serve-{len(started)}"
        data_dir.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ICHOR_")}
        env.update(
            ICHOR_DATA_DIR=str(data_dir),
            ICHOR_GITHUB_WEBHOOK_SECRET=SECRETS["github"],
            ICHOR_GITLAB_WEBHOOK_SECRET=SECRETS["gitlab"],
            ICHOR_GITEA_WEBHOOK_SECRET=SECRETS["gitea"],
            ICHOR_QUEUE_NAME=f"test-{uuid.uuid4().hex[:12]}",
            PYTHONUNBUFFERED="1",
        )
        env.update({f"ICHOR_{k.upper()}": str(v) for k, v in settings.items()})
        log = data_dir / "serve.log"
        proc = popen_ichor_bot(["serve", "--port", str(port)], env, log)
        running = ServeProcess(port, proc, data_dir, log)
        started.append(running)
        for _ in range(600):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{running.url}/healthz", timeout=1).status_code == 200:
                    return running
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"ichor-bot serve did not start: {log.read_text()[-2000:]}")

    yield start
    for running in started:
        running.proc.terminate()
        try:
            running.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            running.proc.kill()
            running.proc.wait()
