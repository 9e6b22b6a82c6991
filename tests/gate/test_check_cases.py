"""Every structural rule and configuration issue as a real git repository checked through the
CLI, against the expected JSON recorded in fixtures/gate/check_expected.json."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from tests.conftest import FIXTURES, MakeRepo, RunCli, load_fixture

CASES: dict[str, Any] = load_fixture("gate/check_cases.yaml")
EXPECTED_FILE = FIXTURES / "gate/check_expected.json"


def _expected() -> dict[str, Any]:
    return json.loads(EXPECTED_FILE.read_text()) if EXPECTED_FILE.exists() else {}


def run_case(name: str, make_repo: MakeRepo, run_cli: RunCli) -> tuple[int, dict[str, Any]]:
    case = CASES[name]
    kwargs: dict[str, Any] = {"symlinks": case.get("symlinks"), "gitlinks": case.get("gitlinks")}
    if "config" in case:
        kwargs["config"] = case["config"]
    repo = make_repo(case.get("files", {}), **kwargs)
    result = run_cli("check", str(repo), "--rev", "HEAD", "--format", "json")
    report = result.json()
    # Configuration issues are also said on stderr, one line each; nothing else is.
    assert result.err.count("\n") == len(report["config_issues"])
    assert all(line.startswith("ichor-bot: error: .ichor.yaml") for line in result.err.splitlines())
    assert len(report.pop("revision")) == 40
    return result.code, report


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name: str, make_repo: MakeRepo, run_cli: RunCli) -> None:
    code, report = run_case(name, make_repo, run_cli)
    if os.environ.get("ICHOR_REGENERATE"):  # maintainers: review the diff before committing
        data = _expected()
        data[name] = {"exit": code, "report": report}
        EXPECTED_FILE.write_text(
            json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        )
        return
    expected = _expected()[name]
    assert report == expected["report"]
    assert code == expected["exit"]
    for target in report["targets"]:
        refused = any(i["severity"] == "error" for i in target["issues"])
        assert target["verdict"] == ("refused" if refused else "accepted")
