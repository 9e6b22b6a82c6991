"""Ingress benchmark: signed GitHub ``pull_request`` deliveries against uvicorn, one process.

32 connections for 10 s (``--seconds``), every delivery with a unique id, from a bundled
asyncio client (keep-alive HTTP/1.1 over raw sockets, so the client is not the bottleneck).
Four servers, measured in the same run: (a) a bare endpoint that only reads the body and
answers 202, (a2) the same endpoint under the connection limits ``ichor-bot serve`` runs with
(header size, read timeouts, connection bound), so their cost is a ratio to (a), (a3) the work
no webhook server that queues can skip — the body's HMAC-SHA256 checked, its JSON parsed, one
Redis write — and (b) the real path, ``ichor-bot serve`` with RQ on a Redis of its own.
(b)/(a3) is what the bot adds over that floor.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bot.cli.replay import signed_headers

ROOT = Path(__file__).resolve().parent.parent
PAYLOAD = ROOT / "fixtures/webhooks/github/pull_request__opened.json"
SECRET = "bench-secret"  # noqa: S105 - a throwaway secret for a local benchmark
BARE_APP = """
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
async def hook(request):
    await request.body()
    return Response(b'{"status":"queued"}', status_code=202, media_type="application/json")
app = Starlette(routes=[Route("/webhooks/github", hook, methods=["POST"])])
"""
FLOOR_APP = """
import hashlib, hmac, json, os
import redis.asyncio as redis
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
SECRET = os.environ["BENCH_SECRET"].encode()
store = redis.Redis.from_url(os.environ["BENCH_REDIS_URL"])
async def hook(request):
    body = await request.body()
    mine = "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(mine, request.headers.get("x-hub-signature-256", "")):
        return Response(status_code=401)
    event = json.loads(body)
    item = {"id": request.headers["x-github-delivery"], "action": event.get("action")}
    await store.lpush("bench:floor", json.dumps(item))
    return Response(b'{"status":"queued"}', status_code=202, media_type="application/json")
app = Starlette(routes=[Route("/webhooks/github", hook, methods=["POST"])])
"""
BARE_LIMITED = """
import sys
import uvicorn
from bare_app import app
from bot.cli.processes import connection_limits
from bot.settings import Settings
from bot.web.protocol import protocol_class
limits = connection_limits(Settings())
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), http=protocol_class(limits),
            log_level="warning", access_log=False)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_port(port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


def request_parts(body: bytes, port: int) -> tuple[bytes, bytes]:
    """The request before and after its delivery id: the signature covers the body only,
    so one signature serves every delivery and only the id changes."""
    headers = signed_headers("github", body, "pull_request", SECRET, "-")
    headers.pop("X-GitHub-Delivery")
    lines = [
        "POST /webhooks/github HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\nX-GitHub-Delivery: ").encode(), b"\r\n\r\n" + body


async def connection(
    port: int, body: bytes, until: float, latencies: list[float], codes: dict[int, int]
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head, tail = request_parts(body, port)
    try:
        while time.perf_counter() < until:
            started = time.perf_counter()
            writer.write(head + uuid.uuid4().hex.encode() + tail)
            status_line = await reader.readline()
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - started)
            code = int(status_line.split()[1])
            codes[code] = codes.get(code, 0) + 1
    finally:
        writer.close()


async def load(
    port: int, seconds: float, connections: int
) -> tuple[float, list[float], dict[int, int]]:
    body = PAYLOAD.read_bytes()
    latencies: list[float] = []
    codes: dict[int, int] = {}
    start = time.perf_counter()
    until = start + seconds
    await asyncio.gather(
        *(connection(port, body, until, latencies, codes) for _ in range(connections))
    )
    return time.perf_counter() - start, latencies, codes


WRK_SCRIPT = """
local body_file = io.open("{body_path}", "rb")
wrk.method = "POST"
wrk.body = body_file:read("*a")
body_file:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-GitHub-Event"] = "pull_request"
wrk.headers["X-Hub-Signature-256"] = "{signature}"
local next_id = 0
function setup(thread)
  next_id = next_id + 1
  thread:set("tid", next_id)
end
local counter = 0
function request()
  counter = counter + 1
  wrk.headers["X-GitHub-Delivery"] = "{run}-" .. tid .. "-" .. counter
  return wrk.format(nil, "/webhooks/github")
end
function done(summary, latency, requests)
  io.write(string.format("RESULT %d %d %d %d %d\\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), summary.errors.status))
end
"""


def measure_wrk(
    port: int, seconds: float, connections: int, tmp: Path
) -> tuple[float, float, float, int]:
    """wrk with a Lua script: 2 threads, unique delivery ids, one signature over the body."""
    body = PAYLOAD.read_bytes()
    signature = signed_headers("github", body, "pull_request", SECRET, "-")["X-Hub-Signature-256"]
    script = tmp / f"load-{port}.lua"
    script.write_text(
        WRK_SCRIPT.format(body_path=PAYLOAD, signature=signature, run=uuid.uuid4().hex)
    )
    wrk = shutil.which("wrk") or "wrk"
    tail = ["-t2", f"-c{connections}", "-s", str(script), f"http://127.0.0.1:{port}"]
    subprocess.run([wrk, "-d1s", *tail], capture_output=True, check=True)  # warm-up
    run = subprocess.run(
        [wrk, f"-d{seconds:.0f}s", *tail], capture_output=True, text=True, check=True
    )
    line = next(x for x in run.stdout.splitlines() if x.startswith("RESULT"))
    requests, duration_us, p50_us, p99_us, bad = (int(x) for x in line.split()[1:])
    return requests / (duration_us / 1e6), p50_us / 1000, p99_us / 1000, bad


def measure(
    port: int, seconds: float, connections: int
) -> tuple[float, float, float, dict[int, int]]:
    asyncio.run(load(port, 1.0, connections))  # warm-up
    elapsed, latencies, codes = asyncio.run(load(port, seconds, connections))
    latencies.sort()
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
    return len(latencies) / elapsed, p50, p99, codes


def main() -> int:
    parser = argparse.ArgumentParser(description="Ichor Bot ingress benchmark")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--ab-rounds", type=int, default=6)
    parser.add_argument("--ab-seconds", type=float, default=3.0)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ichor-ingress-") as tmp:
        bare_port = free_port()
        (Path(tmp) / "bare_app.py").write_text(BARE_APP)
        bare = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "bare_app:app",
                "--port",
                str(bare_port),
                "--log-level",
                "warning",
                "--no-access-log",
            ],
            cwd=tmp,
        )
        limited_port = free_port()
        (Path(tmp) / "bare_limited.py").write_text(BARE_LIMITED)
        limited = subprocess.Popen(
            [sys.executable, "bare_limited.py", str(limited_port)],
            cwd=tmp,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([tmp, str(ROOT)])},
        )
        redis_port = free_port()
        redis_proc = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
        )
        floor_port = free_port()
        (Path(tmp) / "floor_app.py").write_text(FLOOR_APP)
        floor = subprocess.Popen(
            [
                *(sys.executable, "-m", "uvicorn", "floor_app:app", "--port", str(floor_port)),
                *("--log-level", "warning", "--no-access-log"),
            ],
            cwd=tmp,
            env={
                **os.environ,
                "BENCH_SECRET": SECRET,
                "BENCH_REDIS_URL": f"redis://127.0.0.1:{redis_port}/1",
            },
        )
        real_port = free_port()
        env = {
            **os.environ,
            "ICHOR_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
            "ICHOR_GITHUB_WEBHOOK_SECRET": SECRET,
            "ICHOR_DATA_DIR": str(Path(tmp) / "data"),
        }
        real = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve", "--port", str(real_port)],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        servers = (
            (bare_port, "(a) bare endpoint"),
            (limited_port, "(a2) bare, with limits"),
            (floor_port, "(a3) HMAC, JSON, one write"),
            (real_port, "(b) real path"),
        )
        rates: list[float] = []
        ratios: list[float] = []
        try:
            for port, name in servers:
                wait_port(port)
                if shutil.which("wrk"):
                    rate, p50, p99, bad = measure_wrk(
                        port, args.seconds, args.connections, Path(tmp)
                    )
                    answers = f"wrk; non-2xx: {bad}"
                else:
                    rate, p50, p99, codes = measure(port, args.seconds, args.connections)
                    answers = f"bundled client; {codes}"
                rates.append(rate)
                rows.append((name, f"{rate:,.0f}/s", f"{p50:.1f} ms", f"{p99:.1f} ms", answers))
            # The limits' cost is small next to the noise of a shared machine: alternate
            # short runs of (a) and (a2) and take the median of their ratios.
            for round_ in range(args.ab_rounds):
                pair = [bare_port, limited_port][:: 1 if round_ % 2 else -1]
                got = {p: measure(p, args.ab_seconds, args.connections)[0] for p in pair}
                ratios.append(got[limited_port] / got[bare_port])
        finally:
            for proc in (bare, limited, floor, real, redis_proc):
                proc.terminate()
                proc.wait(timeout=10)
    header = ("server", "deliveries", "p50", "p99", "answers")
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(5)]
    for row in (header, tuple("-" * w for w in widths), *rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    print(f"real path: (b)/(a) = {rates[3] / rates[0]:.2f}; (b)/(a3) = {rates[3] / rates[2]:.2f}")
    if ratios:
        rounds = ", ".join(f"{r:.2f}" for r in ratios)
        print(f"limits: (a2)/(a) = {statistics.median(ratios):.2f} (median of {rounds})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
