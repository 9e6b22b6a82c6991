"""Screenshots of the status page as ``make run`` serves it, to look at after changing it.

    .venv/bin/python scripts/status_screenshots.py [OUT_DIR]   # default /tmp/ichor-status

Serves the demo (its pull request, one with hostile file names, a refused delivery) in a
scratch directory and writes ``overview.png`` and one ``check-<n>.png`` per check with
headless Chromium; then a repository in daily use, seeded in a Redis of its own
(``tests/browser/seeded.py``), for ``repository.png`` and ``long-check.png`` (a check of 192
issues). Every page at 1280 px wide, whole.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.state.history import FileHistory
from tests.browser.harness import chromium, demo_server, screenshot
from tests.browser.seeded import LONG_PULL, seeded_server

WIDE = (1280, 900)
TALL = (1280, 2400)  # a whole page in one picture


def main(argv: list[str]) -> int:
    if chromium() is None:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    out = Path(argv[0]) if argv else Path(tempfile.gettempdir()) / "ichor-status"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch, demo_server(Path(scratch)) as server:
        shots = [screenshot(server.url + "/", out / "overview.png", Path(scratch) / "c0", TALL)]
        for n, check in enumerate(FileHistory(server.data_dir / "history").checks(), 1):
            url = f"{server.url}/checks/{check.id}"
            shots.append(screenshot(url, out / f"check-{n}.png", Path(scratch) / f"c{n}", WIDE))
    with tempfile.TemporaryDirectory() as scratch, seeded_server(Path(scratch)) as seeded:
        chrome = Path(scratch) / "chrome"
        shots.append(screenshot(seeded.repository_url, out / "repository.png", chrome, TALL))
        long_check = seeded.check_url(LONG_PULL)
        shots.append(screenshot(long_check, out / "long-check.png", chrome, TALL))
    for shot in shots:
        print(shot)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
