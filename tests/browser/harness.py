"""The status page as a newcomer sees it: ``ichor-bot serve`` with the in-process queue and the
``local`` forge (what ``make run`` starts), fed real deliveries, looked at by headless Chromium.

Also used by ``scripts/status_screenshots.py``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from bot.cli.demo import DEMO_PULL_REPO, build_demo_pull, build_repository, read_tree
from bot.cli.replay import signed_headers
from tests.support.forkserver import Process, popen_ichor_bot

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SECRET = "demo-secret"
# Hostile names: markup in file names, as a pull request can bring them, and in a repository
# name (ingress refuses such a name, so it is put straight into the stored history).
HOSTILE_REPO = "demo/hostile"
HOSTILE_NAME = '<script>alert(1)</script>/"><img src=x onerror=alert(3)>'
HOSTILE_FILES = {
    "clusters/prod/<script>alert(1)</script>.txt": b"hello\n",
    'clusters/prod/"><img src=x onerror=alert(2)>.txt': b"hello\n",
}
# Chromium without these makes connections this machine refuses (and waits on them).
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def require_chromium() -> None:
    """A browser module's first line: Chromium, or a failure under CI (``make test`` installs
    it) and a skip on a developer's machine without it, which says how to get it."""
    if chromium() is not None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is missing: CI installs it (make test)", pytrace=False)
    pytest.skip("chromium is not installed (make test installs it)", allow_module_level=True)


@dataclass
class Server:
    url: str
    data_dir: Path
    repos: Path
    proc: Process | None = None

    def post(self, payload: bytes, *, event: str, delivery: str, secret: str = SECRET) -> int:
        headers = signed_headers("github", payload, event, secret, delivery)
        headers["Content-Type"] = "application/json"
        answer = httpx.post(f"{self.url}/webhooks/github", content=payload, headers=headers)
        return answer.status_code


def _environment(data_dir: Path, repos: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ICHOR_")}
    env.update(
        ICHOR_GITHUB_WEBHOOK_SECRET=SECRET,
        ICHOR_DATA_DIR=str(data_dir),
        ICHOR_LOCAL_REPOS=str(repos),
    )
    return env


def start(server: Server, log: Path) -> None:
    port = int(server.url.rsplit(":", 1)[1])
    server.proc = popen_ichor_bot(
        ["serve", "--port", str(port)], _environment(server.data_dir, server.repos), log
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            httpx.get(f"{server.url}/healthz", timeout=1)
            return
        time.sleep(0.05)
    raise RuntimeError(f"ichor-bot serve did not answer; see {log}")


def stop(server: Server) -> None:
    if server.proc is not None:
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=15)
        server.proc = None


def seed_hostile_history(data_dir: Path) -> None:
    """A check and a delivery whose repository name is markup, as a store could hold them."""
    from bot.state.history import CheckEntry, DeliveryEntry, FileHistory, IssueLine

    history = FileHistory(data_dir / "history")
    history.add_deliveries([DeliveryEntry(1.0e9, "gitea", 202, "queued", "", "push", HOSTILE_NAME)])
    issue = IssueLine(HOSTILE_NAME, 1, "failure", "<b>title</b>", "<script>alert(4)</script>")
    history.add_check(
        CheckEntry(
            1.0e9,
            "gitea",
            HOSTILE_NAME,
            3,
            "ab" * 20,
            "failure",
            "<i>refused</i>",
            "<script>alert(5)</script> | **summary**",
            (issue,),
            1,
            "seeded",
            "javascript:alert(6)",
        )
    )


def hostile_delivery(repos: Path, demo_payload: Path) -> bytes:
    """A repository whose name and files are markup, and a pull request delivery for it."""
    import json

    repo = repos / HOSTILE_REPO
    tree = read_tree(ROOT / "fixtures/demo/tree")
    base = build_repository(repo, tree, message="base")
    head = build_repository(repo, {**tree, **HOSTILE_FILES}, message="hostile names")
    payload = json.loads(demo_payload.read_text())
    name = HOSTILE_REPO.rsplit("/", 1)[1]
    # Its URLs name it too: ingress refuses a delivery whose URLs name another repository.
    web = f"https://github.com/{HOSTILE_REPO}"
    urls = {"full_name": HOSTILE_REPO, "name": name, "html_url": web, "clone_url": web + ".git"}
    for side, sha in (("base", base), ("head", head)):
        payload["pull_request"][side]["sha"] = sha
        payload["pull_request"][side]["repo"].update(urls)
    payload["number"] = payload["pull_request"]["number"] = 7
    payload["repository"].update(urls)
    return json.dumps(payload).encode()


@contextlib.contextmanager
def demo_server(workdir: Path) -> Iterator[Server]:
    """A served bot with the demo pull request checked, a hostile one checked, and two refused
    deliveries (a wrong secret, a malformed body)."""
    repos = workdir / "repos"
    delivery = build_demo_pull(ROOT / "fixtures/demo", repos)
    server = Server(f"http://127.0.0.1:{free_port()}", workdir / "data", repos)
    seed_hostile_history(server.data_dir)
    start(server, workdir / "serve.log")
    try:
        body = delivery.read_bytes()
        assert server.post(body, event="pull_request", delivery="demo-1") == 202
        hostile = hostile_delivery(repos, delivery)
        assert server.post(hostile, event="pull_request", delivery="hostile-1") == 202
        assert server.post(body, event="pull_request", delivery="bad-1", secret="wrong") == 401
        assert server.post(b"{not json", event="pull_request", delivery="bad-2") == 400
        wait_for_checks(server, {DEMO_PULL_REPO, HOSTILE_REPO})
        yield server
    finally:
        stop(server)


def wait_for_checks(server: Server, repositories: set[str], timeout: float = 60) -> None:
    from bot.state.history import FileHistory

    history = FileHistory(server.data_dir / "history")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if repositories <= {c.repository for c in history.checks()}:
            return
        time.sleep(0.1)
    raise AssertionError(f"no checks posted for {repositories}")


def run_chromium(args: list[str], user_data: Path, timeout: float = 60) -> str:
    exe = chromium()
    assert exe is not None
    proc = subprocess.run(
        [exe, *CHROMIUM_FLAGS, f"--user-data-dir={user_data}", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def dump_dom(url: str, user_data: Path) -> str:
    return run_chromium(["--dump-dom", url], user_data)


def screenshot(url: str, out: Path, user_data: Path, size: tuple[int, int] = (1280, 900)) -> Path:
    run_chromium(
        [f"--screenshot={out}", f"--window-size={size[0]},{size[1]}", "--hide-scrollbars", url],
        user_data,
    )
    return out
