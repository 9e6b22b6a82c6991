"""The trimmed API descriptions under fixtures/forge-api are what the script makes today."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.needs_shared
def test_api_fixtures_match_the_recorded_descriptions() -> None:
    script = ROOT / "scripts" / "trim_api_descriptions.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
