"""The bot as it runs in production, for end-to-end tests: ``ichor-bot serve`` (uvicorn) and
``ichor-bot worker`` processes on real Redis, talking to a fake forge over real HTTP.

Every git process the worker starts goes through a shim that records its argv, so a test can
prove what reached a command line.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import redis

from bot.cli.replay import signed_headers
from tests.support.forkserver import Process, popen_ichor_bot, run_ichor_bot
from tests.support.git_shim import install_git_shim
from tests.support.redis_url import SHARED_REDIS_URL

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SECRET = "e2e-webhook-secret"
REDIS_URL = SHARED_REDIS_URL
# Short recovery intervals, so a test sees a dead worker's job come back within seconds;
# ICHOR_E2E_DEFAULT_RECOVERY=1 runs the workers with the production defaults instead.
FAST_RECOVERY = (
    {}
    if os.environ.get("ICHOR_E2E_DEFAULT_RECOVERY")
    else {
        "ICHOR_WORKER_HEARTBEAT": "0.2",
        "ICHOR_JOB_HEARTBEAT_TTL": "1",
        "ICHOR_WORKER_REAP_INTERVAL": "0.3",
    }
)
PR_FIXTURE = ROOT / "fixtures/webhooks/github/pull_request__synchronize.json"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Bot:
    """One web process (started once) and worker runs on demand, all on one RQ queue."""

    def __init__(
        self, workdir: Path, redis_url: str = REDIS_URL, web_env: Mapping[str, str] | None = None
    ) -> None:
        self.workdir = workdir
        self.redis_url = redis_url
        self.web_env = dict(web_env or {})  # more settings of the web process
        self.queue = f"e2e-{uuid.uuid4().hex[:10]}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.deliveries: list[str] = []
        self.workers: list[WorkerProcess] = []
        self.repositories: set[str] = set()  # full names whose pull request state to clean
        self.redis = redis.Redis.from_url(redis_url)
        self._web: Process | None = None
        self.web_log = workdir / "web.log"

    def _env(self, extra: Mapping[str, str]) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ICHOR_")}
        env.update(
            ICHOR_REDIS_URL=self.redis_url,
            ICHOR_QUEUE_NAME=self.queue,
            ICHOR_GITHUB_WEBHOOK_SECRET=SECRET,
            ICHOR_GITLAB_WEBHOOK_SECRET=SECRET,
            ICHOR_GITEA_WEBHOOK_SECRET=SECRET,
            # No sweep unless a test asks for one: a test's forge calls are its own.
            ICHOR_RECONCILE_INTERVAL="0",
            PYTHONUNBUFFERED="1",
        )
        env.update(extra)
        return env

    def start(self) -> None:
        env = self._env({"ICHOR_DATA_DIR": str(self.workdir / "web-data"), **self.web_env})
        self._web = popen_ichor_bot(["serve", "--port", str(self.port)], env, self.web_log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return
            if self._web.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"ichor-bot serve did not start: {self.web_log.read_text()[-2000:]}")

    def stop(self) -> None:
        for worker in self.workers:
            worker.kill()
        if self._web is not None:
            self._web.terminate()
            try:
                self._web.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._web.kill()
                self._web.wait()
        self._cleanup_redis()
        self.redis.close()

    def _cleanup_redis(self) -> None:
        keys = list(self.redis.scan_iter(f"rq:*{self.queue}*", count=1000))
        keys += list(self.redis.scan_iter(f"ichor:history:{self.queue}:*", count=1000))
        for job in self.deliveries:
            keys += [f"ichor:delivery:{job}", f"ichor:attempts:{job}", f"rq:job:{job}"]
            keys += list(self.redis.scan_iter(f"rq:results:{job}*"))
        for name in self.repositories:
            for prefix in (
                "ichor:heads",
                "ichor:checked",
                "ichor:line-comments",
                "ichor:approvals",
                "ichor:shown",
                "ichor:permission",
            ):
                keys += list(self.redis.scan_iter(f"{prefix}:*:{name}:*", count=1000))
        if keys:
            self.redis.delete(*keys)
        self.redis.srem("rq:queues", f"rq:queue:{self.queue}")

    def post(
        self,
        event: str,
        payload: Mapping[str, Any],
        delivery: str | None = None,
        *,
        forge: str = "github",
    ) -> int:
        """Sign and post a delivery the way ``forge`` would (github, gitlab, gitea, forgejo)."""
        delivery = delivery or str(uuid.uuid4())
        route = "gitea" if forge == "forgejo" else forge
        self.deliveries.append(f"{route}-{delivery}")
        body = json.dumps(payload).encode()
        headers = signed_headers(forge, body, event, SECRET, delivery)
        response = httpx.post(f"{self.url}/webhooks/{route}", content=body, headers=headers)
        job = response.json().get("job") if response.status_code in (200, 202) else None
        if isinstance(job, str) and job not in self.deliveries:  # a merge group's, by its head
            self.deliveries.append(job)
        return response.status_code

    def run_worker(
        self, forge_env: Mapping[str, str], data_dir: Path, *, timeout: float = 120
    ) -> WorkerRun:
        """A real ``ichor-bot worker --burst`` (forked from a pre-imported interpreter, see
        :mod:`tests.support.forkserver`): runs what is queued, then exits."""
        log = data_dir.parent / f"worker-{uuid.uuid4().hex[:6]}.log"
        argv_log = data_dir.parent / "git-argv.log"
        shim = install_git_shim(data_dir.parent / "shim", argv_log)
        env = self._env({**forge_env, "ICHOR_DATA_DIR": str(data_dir)})
        env["PATH"] = f"{shim}{os.pathsep}{env.get('PATH', '')}"
        started = time.monotonic()
        code = run_ichor_bot(["worker", "--burst"], env, log, timeout=timeout)
        return WorkerRun(code, log.read_text(), argv_log, time.monotonic() - started)

    def start_worker(
        self, forge_env: Mapping[str, str], data_dir: Path, extra: Mapping[str, str] = FAST_RECOVERY
    ) -> WorkerProcess:
        """A real ``ichor-bot worker`` that keeps running until it is killed."""
        log = data_dir.parent / f"worker-{uuid.uuid4().hex[:6]}.log"
        env = self._env({**forge_env, **extra, "ICHOR_DATA_DIR": str(data_dir)})
        # A session of its own, so a kill takes its scheduler process with it (RQ forks one;
        # SIGKILL to the worker alone would leave it running).
        worker = WorkerProcess(popen_ichor_bot(["worker"], env, log), log)
        self.workers.append(worker)
        return worker

    def jobs_running_on(self, worker: WorkerProcess) -> set[str]:
        """The jobs whose lease ``worker`` holds (RQ knows the worker by name, with its pid)."""
        names = {
            _text(key).removeprefix("rq:worker:")
            for key in self.redis.smembers(f"rq:workers:{self.queue}")
            if self.redis.hget(key, "pid") == str(worker.proc.pid).encode()
        }
        return {
            _text(key).removeprefix("ichor:running:")
            for key in self.redis.scan_iter("ichor:running:*")
            if _text(self.redis.get(key) or b"") in names
        }

    def job_status(self, job_id: str) -> str | None:
        status = self.redis.hget(f"rq:job:{job_id}", "status")
        return status.decode() if isinstance(status, bytes) else None


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class WorkerProcess:
    def __init__(self, proc: Process, log: Path) -> None:
        self.proc = proc
        self.log_path = log

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL to the worker and its scheduler: no chance to clean up, as when a machine
        dies."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


class WorkerRun:
    def __init__(self, code: int, log: str, argv_log: Path, seconds: float) -> None:
        self.code = code
        self.log = log
        self.argv_log = argv_log
        self.seconds = seconds

    def git_argvs(self) -> list[list[str]]:
        if not self.argv_log.exists():
            return []
        records = self.argv_log.read_bytes().split(b"\n")
        return [[a.decode(errors="replace") for a in r.split(b"\0") if a] for r in records if r]


def pull_request_payload(
    *,
    full_name: str,
    clone_url: str,
    number: int,
    head_sha: str,
    base_sha: str,
    base_ref: str = "main",
    head_ref: str = "feature",
    fork: str | None = None,
    installation_id: int = 42,
    action: str = "synchronize",
) -> dict[str, Any]:
    """A recorded GitHub ``pull_request`` delivery, pointed at a repository of the fake."""
    payload: dict[str, Any] = copy.deepcopy(json.loads(PR_FIXTURE.read_text()))
    owner, name = full_name.split("/")
    web = clone_url.removesuffix(".git")
    payload["action"] = action
    payload["number"] = number
    payload["installation"] = {"id": installation_id}
    repo = payload["repository"]
    repo.update(full_name=full_name, name=name, clone_url=clone_url, html_url=web)
    repo["owner"]["login"] = owner
    pr = payload["pull_request"]
    pr["number"] = number
    pr["draft"] = False
    pr["base"].update(sha=base_sha, ref=base_ref, label=f"{owner}:{base_ref}")
    pr["base"]["repo"] = copy.deepcopy(repo)
    head_repo = copy.deepcopy(repo)
    if fork is not None:
        fork_owner, fork_name = fork.split("/")
        # A fork lives elsewhere; the bot must never contact it.
        head_repo.update(
            full_name=fork,
            name=fork_name,
            id=990001,
            clone_url=f"https://forks.invalid/{fork}.git",
            html_url=f"https://forks.invalid/{fork}",
            fork=True,
        )
        head_repo["owner"]["login"] = fork_owner
    pr["head"].update(sha=head_sha, ref=head_ref, label=f"{head_repo['owner']['login']}:{head_ref}")
    pr["head"]["repo"] = head_repo
    return payload


@contextlib.contextmanager
def running_bot(
    workdir: Path, redis_url: str = REDIS_URL, web_env: Mapping[str, str] | None = None
) -> Iterator[Bot]:
    bot = Bot(workdir, redis_url, web_env)
    bot.start()
    try:
        yield bot
    finally:
        bot.stop()
