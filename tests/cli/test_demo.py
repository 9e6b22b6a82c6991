"""The demo `make run` checks: prod accepted, staging refused with each kind of problem."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.cli.demo import build_demo
from tests.conftest import FIXTURES, RunCli


def test_demo_repository(tmp_path: Path, run_cli: RunCli) -> None:
    shutil.copytree(FIXTURES / "demo" / "tree", tmp_path / "tree")
    first = build_demo(tmp_path)
    assert build_demo(tmp_path) == first  # fixed identity and dates: the same commit every time
    result = run_cli("check", str(tmp_path / "repo"), "--rev", "HEAD", "--format", "json")
    assert result.code == 1
    prod, staging = result.json()["targets"]
    assert (prod["name"], prod["verdict"], prod["issues"]) == ("prod", "accepted", [])
    assert staging["verdict"] == "refused"
    assert {i["kind"] for i in staging["issues"]} == {
        "foreign-file",
        "foreign-symlink",
        "foreign-submodule",
        "ignore-shadows-managed",
        "plaintext-secret",
    }
