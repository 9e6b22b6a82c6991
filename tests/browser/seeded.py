"""A repository in daily use, as the status page keeps it: checks of several pull requests and
branches (one long, with hundreds of issues), objects waiting for ``/approve``, change pull
requests and commands — written into a Redis of its own the way the workers write them, and
served by ``ichor-bot serve`` on that Redis (no worker: nothing is queued).

Used by ``tests/browser/test_daily_use.py`` and ``scripts/status_screenshots.py``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import redis

from bot.state.base import AuditRecord
from bot.state.check_facts import CheckFacts, Finding, TargetLine, Waiting
from bot.state.history import CheckEntry, DeliveryEntry, RedisHistory
from bot.state.redis_state import RedisAudit
from tests.browser.harness import free_port
from tests.support.forkserver import Process, popen_ichor_bot
from tests.support.redis_server import RedisServer

FORGE = "github"
REPO = "acme/platform"
WEB = "https://github.example/acme/platform"
QUEUE = "seeded"
T0 = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC: every time below is fixed
LONG_PULL = 45
LONG_NEW, LONG_EXISTING = 12, 180


def _sha(n: int) -> str:
    return f"{n:02x}" * 20


def _finding(target: str, n: int, *, new: bool) -> Finding:
    if n % 3 == 0:
        return Finding(
            target,
            f"clusters/{target}/tools/run-{n}.sh",
            None,
            "error",
            "foreign-file",
            "not a Kubernetes object: a file the operator does not own",
            new,
        )
    if n % 3 == 1:
        return Finding(
            target,
            f"clusters/{target}/apps/app-{n}/secret.yaml",
            4,
            "error",
            "plaintext-secret",
            f"Secret 'app-{n}' is sensitive and stored in plain text",
            new,
        )
    return Finding(
        target,
        f"clusters/{target}/apps/app-{n}/deploy.yaml",
        12,
        "warning",
        "unknown-type",
        "example.com/v1 Widget is not in the type registry",
        new,
    )


@dataclass(frozen=True)
class Seeded:
    """One kept check and the job that posted it."""

    entry: CheckEntry
    queued: float


def _check(
    n: int,
    number: int | None,
    branch: str,
    conclusion: str,
    title: str,
    targets: tuple[TargetLine, ...],
    findings: tuple[Finding, ...] = (),
    waiting: tuple[Waiting, ...] = (),
) -> Seeded:
    queued = T0 + n * 600
    job = f"{FORGE}-seeded-{n}"
    facts = CheckFacts(branch, targets, findings, len(findings), waiting)
    entry = CheckEntry(
        queued + 8.4 + 3.1 * n,
        FORGE,
        REPO,
        number,
        _sha(n),
        conclusion,
        title,
        f"| Target | Verdict |\n| --- | --- |\n| prod | {title} |\n\n"
        "- <code>clusters/prod/x.txt</code> — `foreign-file` — not YAML *(already on base)*",
        (),
        len(findings),
        f"seeded-{n}",
        WEB,
        "",
        job,
        queued + 1.2,
        facts,
    )
    return Seeded(entry, queued)


def _target(name: str, verdict: str, base: str | None, new: int, existing: int) -> TargetLine:
    return TargetLine(name, f"clusters/{name}", verdict, base, new, existing, verdict == "refused")


def checks() -> list[Seeded]:
    long_findings = tuple(
        [_finding("prod", n, new=True) for n in range(LONG_NEW)]
        + [_finding("staging", n, new=False) for n in range(LONG_EXISTING)]
    )
    return [
        _check(
            1,
            None,
            "main",
            "success",
            "2 targets accepted",
            (
                _target("prod", "accepted", "accepted", 0, 0),
                _target("staging", "accepted", "accepted", 0, 0),
            ),
        ),
        _check(
            2,
            42,
            "add-redis",
            "failure",
            "1 target refused · 2 new issues",
            (_target("prod", "refused", "accepted", 2, 0),),
            (_finding("prod", 1, new=True), _finding("prod", 3, new=True)),
        ),
        _check(
            3,
            43,
            "ichor/approve-web-cache",
            "success",
            "1 target accepted",
            (_target("prod", "accepted", "accepted", 0, 0),),
        ),
        _check(
            4,
            44,
            "new-namespace",
            "failure",
            "2 new objects wait for /approve",
            (_target("platform", "accepted", "accepted", 0, 0),),
            waiting=(
                Waiting("platform", "v1/Namespace payments", "clusters/platform/ns.yaml"),
                Waiting(
                    "platform",
                    "apps/v1/Deployment payments/api",
                    "clusters/platform/payments/api.yaml",
                ),
            ),
        ),
        _check(
            5,
            None,
            "release",
            "failure",
            "1 target refused · 1 new issue",
            (_target("staging", "refused", "accepted", 1, 0),),
            (_finding("staging", 4, new=True),),
        ),
        _check(
            6,
            LONG_PULL,
            "bulk-import",
            "failure",
            f"2 targets refused · {LONG_NEW} new issues, {LONG_EXISTING} already on base",
            (
                _target("prod", "refused", "accepted", LONG_NEW, 0),
                _target("staging", "refused", "refused", 0, LONG_EXISTING),
            ),
            long_findings,
        ),
        _check(
            7,
            None,
            "main",
            "success",
            "2 targets accepted",
            (
                _target("prod", "accepted", "accepted", 0, 0),
                _target("staging", "accepted", "accepted", 0, 0),
            ),
        ),
    ]


def records() -> list[AuditRecord]:
    def at(minutes: int) -> datetime:
        return datetime.fromtimestamp(T0 + minutes * 60, UTC)

    return [
        AuditRecord(
            at(20),
            FORGE,
            REPO,
            "alice",
            "approve",
            "pr-opened",
            42,
            "prod",
            "web/cache",
            f"{WEB}/pull/43",
            "c-1",
        ),
        AuditRecord(
            at(30),
            FORGE,
            REPO,
            "bob",
            "reject",
            "pr-existing",
            44,
            "platform",
            "payments/api",
            f"{WEB}/pull/46",
            "c-2",
        ),
        AuditRecord(at(35), FORGE, REPO, "carol", "help", "done", 44, delivery="c-3"),
        AuditRecord(
            at(40),
            FORGE,
            REPO,
            "mallory",
            "approve",
            "refused: mallory may not approve",
            44,
            "platform",
            "payments/api",
            delivery="c-4",
        ),
    ]


def seed(url: str) -> list[Seeded]:
    history = RedisHistory(url, QUEUE)
    connection = redis.Redis.from_url(url)
    try:
        seeded = checks()
        for s in seeded:
            history.add_check(s.entry)
        deliveries = [
            DeliveryEntry(
                s.queued,
                FORGE,
                202,
                "queued",
                "",
                "pull_request" if s.entry.number else "push",
                REPO,
                s.entry.delivery_id,
                s.entry.job_id,
            )
            for s in seeded
        ]
        history.add_deliveries(deliveries)
        audit = RedisAudit(connection)
        for record in records():
            audit.append(record)
        return seeded
    finally:
        history.close()
        connection.close()


@dataclass
class SeededServer:
    url: str
    checks: list[Seeded]

    def check_url(self, number: int) -> str:
        entry = next(s.entry for s in self.checks if s.entry.number == number)
        return f"{self.url}/checks/{entry.id}"

    @property
    def repository_url(self) -> str:
        return f"{self.url}/repository?forge={FORGE}&repo={REPO}"


@contextlib.contextmanager
def seeded_server(workdir: Path, **env: str) -> Iterator[SeededServer]:
    with RedisServer(workdir / "redis", persistent=False) as own:
        seeded = seed(own.url)
        port = free_port()
        environment = {
            "ICHOR_REDIS_URL": own.url,
            "ICHOR_QUEUE_NAME": QUEUE,
            "ICHOR_DATA_DIR": str(workdir / "data"),
            "ICHOR_GITHUB_WEBHOOK_SECRET": "seeded-secret",
            "ICHOR_RECONCILE_INTERVAL": "0",
            **env,
        }
        proc: Process = popen_ichor_bot(
            ["serve", "--port", str(port)], _env(environment), workdir / "serve.log"
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, workdir / "serve.log")
            yield SeededServer(url, seeded)
        finally:
            proc.terminate()
            proc.wait(timeout=15)


def _env(extra: dict[str, str]) -> dict[str, str]:
    import os

    return {**{k: v for k, v in os.environ.items() if not k.startswith("ICHOR_")}, **extra}


def _wait_healthy(url: str, log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            httpx.get(f"{url}/healthz", timeout=1)
            return
        time.sleep(0.05)
    raise RuntimeError(f"ichor-bot serve did not answer; see {log}")
