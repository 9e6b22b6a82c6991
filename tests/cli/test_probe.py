"""The worker's probe: the age of the file its heartbeat touches, read with no bot import."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.cli.probe import main

NOW = 1_800_000_000.0


def touched(tmp_path: Path, seconds_ago: float) -> Path:
    alive = tmp_path / "alive"
    alive.touch()
    os.utime(alive, (NOW - seconds_ago, NOW - seconds_ago))
    return alive


def test_a_fresh_file_is_alive(tmp_path: Path) -> None:
    assert main([str(touched(tmp_path, 3)), "30"], clock=lambda: NOW) == 0


def test_a_stale_file_says_how_stale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(touched(tmp_path, 45)), "30"], clock=lambda: NOW) == 1
    assert "last touched 45s ago (the limit is 30s)" in capsys.readouterr().err


def test_no_file_is_a_worker_that_never_began(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path / "missing"), "30"], clock=lambda: NOW) == 1
    assert "has not started its heartbeat" in capsys.readouterr().err


def test_bad_arguments_are_a_usage_error(tmp_path: Path) -> None:
    assert main([str(tmp_path)], clock=lambda: NOW) == 2
    assert main([str(tmp_path), "soon"], clock=lambda: NOW) == 2
