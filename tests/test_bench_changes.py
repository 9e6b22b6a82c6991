"""bench/bench_changes.py on a small repository: the whole path runs (serve, worker, the
person's clone and push) and the report has its figures. Nothing about speed is asserted."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.needs_shared
def test_two_runs_on_a_small_repository_report_both_ways_and_the_ratio() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench/bench_changes.py"), "--runs", "2", "--files", "100"],
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard: 15 s here on /dev/shm, 40 s on a loaded disk
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert re.search(r"^repository: 1,\d{3} files, 1 targets", out, re.M), out
    for label in ("bot: comment → pull request opened", "person: clone, edit, commit, push"):
        assert re.search(rf"^{re.escape(label)} +2 +\d+ms +\d+ms$", out, re.M), out
    assert re.search(r"^ratio bot / person: p50 \d+\.\d\dx, p95 \d+\.\d\dx$", out, re.M), out
    # Read the pull request, react, look for an open change PR, open one, reply; and the
    # commenter's permission when its answer from the warm-up is over 60 s old.
    calls = re.search(r"^API calls per timed change, the reply included: \[([\d, ]+)\]", out, re.M)
    assert calls is not None and {int(c) for c in calls[1].split(",")} <= {5, 6}, out
