"""The same flow on the ``local`` forge, as ``make run`` runs it: no network but loopback, no
Redis — ``ichor-bot serve`` with the in-process queue, a replayed delivery, the result on the
status page and in ``ichor-bot results``."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import httpx

from bot.cli.demo import build_demo_pull
from tests.e2e.harness import BIN, ROOT, free_port


def test_demo_pull_request_is_checked_on_the_local_forge(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    delivery = build_demo_pull(ROOT / "fixtures/demo", repos)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ICHOR_")}
    env.update(
        ICHOR_GITHUB_WEBHOOK_SECRET="demo-secret",
        ICHOR_DATA_DIR=str(tmp_path / "data"),
        ICHOR_LOCAL_REPOS=str(repos),
    )
    log = (tmp_path / "serve.log").open("wb")
    web = subprocess.Popen(
        [str(BIN / "ichor-bot"), "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{url}/healthz", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        replay = subprocess.run(
            [str(BIN / "ichor-bot"), "replay", str(delivery), "--forge", "github", "--url", url],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert replay.returncode == 0, replay.stdout + replay.stderr
        assert replay.stdout.startswith("202")
        results = ""
        while time.monotonic() < deadline and "failure" not in results:
            results = subprocess.run(
                [str(BIN / "ichor-bot"), "results"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            time.sleep(0.1)
        assert "demo/gitops" in results
        assert "failure: 1 target refused · 1 new issue" in results
        # The status page keeps the check once it is published (just after the result file).
        page = ""
        while time.monotonic() < deadline and "1 target refused · 1 new issue" not in page:
            page = httpx.get(url).text
            time.sleep(0.1)
        glyph = '<span class="glyph" aria-hidden="true">✗</span>'
        assert f'<span class="verdict failure">{glyph} failure</span> 1 target refused' in page
        assert "posted to local" in page  # a GitHub delivery, its result on the local forge
    finally:
        web.terminate()
        web.wait(timeout=10)
        log.close()
