"""``make run``: one ``PORT`` for the server, the health poll, the banner and the replay; a
port already taken is one clear line, and nothing is left running either way."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.web.conftest import free_port

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _make_run(tmp_path: Path, port: int) -> subprocess.Popen[str]:
    # A copy of the demo and the delivery it is built from, so the worktree is left as it is.
    demo = tmp_path / "fixtures" / "demo"
    shutil.copytree(FIXTURES / "demo" / "tree", demo / "tree")
    delivery = Path("webhooks", "github", "pull_request__opened.json")
    (demo.parent / delivery).parent.mkdir(parents=True)
    shutil.copy(FIXTURES / delivery, demo.parent / delivery)
    command = ["make", "-s", "run", f"PORT={port}", f"DEMO={demo}", f"DATA_DIR={tmp_path / 'd'}"]
    return subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: what is left of it can be seen
    )


def _group_is_gone(pgid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_one_port_everywhere() -> None:
    dry = subprocess.run(
        ["make", "-n", "run", "PORT=18123"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "8000" not in dry
    assert "--port 18123" in dry  # the server
    assert "http://127.0.0.1:18123/healthz" in dry  # the health poll
    assert "Serving on http://127.0.0.1:18123" in dry  # the banner
    assert "--url http://127.0.0.1:18123" in dry  # the replay


def test_a_taken_port_is_one_line_and_nothing_runs(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        process = _make_run(tmp_path, port)
        out, err = process.communicate(timeout=120)
        assert process.returncode != 0
        # make's own "make: *** ... Error" line ("make[1]:" when make test runs this) is not ours.
        ours = [line for line in err.splitlines() if not re.match(r"make(\[\d+\])?: ", line)]
        assert ours == [
            f"make run: port {port} on 127.0.0.1 is already in use; stop what holds it or "
            "choose another port (ICHOR_PORT, --port, or make run PORT=...)"
        ]
        assert "Traceback" not in err and out == ""
        assert not (
            tmp_path / "fixtures" / "demo" / "repo"
        ).exists()  # stopped before anything started
        assert _group_is_gone(process.pid)


def test_run_serves_on_port_and_stops_cleanly(tmp_path: Path) -> None:
    port = free_port()
    process = _make_run(tmp_path, port)
    assert process.stdout is not None
    lines: list[str] = []
    try:
        for line in process.stdout:
            lines.append(line)
            if line.startswith("202 "):  # the replay reached this server on this port
                break
    finally:
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=60)
    text = "".join(lines) + err
    assert f"Serving on http://127.0.0.1:{port}" in text
    assert any(line.startswith("202 ") for line in lines), text
    assert _group_is_gone(process.pid)
