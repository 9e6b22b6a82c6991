"""scripts/compare_reports.py: with bot/ as committed, HEAD's reports are byte-identical."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import FIXTURES, ROOT


def test_head_against_itself_is_identical() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts/compare_reports.py"),
            "HEAD",
            str(FIXTURES / "demo/tree"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    clean = subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", "HEAD", "--", "bot"])
    if clean.returncode == 0:  # uncommitted work on the gate may change a report on purpose
        assert proc.returncode == 0 and proc.stdout.startswith("identical  "), proc.stdout
