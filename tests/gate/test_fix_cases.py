"""Messages and fixes people act on, each case a real git repository checked through the CLI
(fixtures/gate/fix_cases.yaml), against the JSON report and the per-issue fixes recorded in
fixtures/gate/fix_expected.json."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes

import pytest

from bot.paths import decode_path, encode_path
from tests.conftest import FIXTURES, MakeRepo, RunCli, load_fixture

CASES: dict[str, Any] = load_fixture("gate/fix_cases.yaml")
EXPECTED_FILE = FIXTURES / "gate/fix_expected.json"


def _expected() -> dict[str, Any]:
    return json.loads(EXPECTED_FILE.read_text()) if EXPECTED_FILE.exists() else {}


def _files(case: dict[str, Any]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path, data in case["files"].items():
        if isinstance(data, dict):
            out[path] = (FIXTURES / data["fixture"]).read_bytes()
        else:
            out[path] = data.encode()
    return out


def tree_paths(repo: Path) -> set[str]:
    listed = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "-z", "--name-only", "HEAD"],
        capture_output=True,
        check=True,
    ).stdout
    return {decode_path(raw) for raw in listed.split(b"\0") if raw}


def check(repo: Path, run_cli: RunCli, fmt: str) -> tuple[int, str]:
    result = run_cli("check", str(repo), "--rev", "HEAD", "--format", fmt)
    assert result.err == ""
    return result.code, result.out


def sarif_fixes(sarif: dict[str, Any]) -> dict[str, str]:
    fixes: dict[str, str] = {}
    for result in sarif["runs"][0]["results"]:
        fix = result.get("properties", {}).get("fix")
        if fix is not None:
            physical = result["locations"][0]["physicalLocation"]
            path = decode_path(unquote_to_bytes(physical["artifactLocation"]["uri"]))
            fixes[f"{path}:{physical.get('region', {}).get('startLine')}"] = fix
    return fixes


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name: str, make_repo: MakeRepo, run_cli: RunCli) -> None:
    case = CASES[name]
    kwargs: dict[str, Any] = {"config": case["config"]} if "config" in case else {}
    repo = make_repo(_files(case), **kwargs)
    code, out = check(repo, run_cli, "json")
    report = json.loads(out)
    assert len(report.pop("revision")) == 40
    sarif_code, sarif_out = check(repo, run_cli, "sarif")
    assert sarif_code == code
    fixes = sarif_fixes(json.loads(sarif_out))
    if os.environ.get("ICHOR_REGENERATE"):  # maintainers: review the diff before committing
        data = _expected()
        data[name] = {"exit": code, "report": report, "fixes": fixes}
        EXPECTED_FILE.write_text(
            json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        )
        return
    expected = _expected()[name]
    assert report == expected["report"]
    assert code == expected["exit"]
    assert fixes == expected["fixes"]
    # Every path in the report names a file of the tree exactly, as the SARIF location does.
    paths = tree_paths(repo)
    for target in report["targets"]:
        for issue in target["issues"]:
            assert issue["path"] in paths
    # The text report shows each of those fixes as it is.
    _, text = check(repo, run_cli, "text")
    for fix in fixes.values():
        assert f"    fix: {fix}\n" in text


def test_a_name_that_is_not_utf8_round_trips(make_repo: MakeRepo, run_cli: RunCli) -> None:
    raw = b"t/caf\xe9 \xff.txt"
    repo = make_repo({decode_path(raw): b"x"})
    _, out = check(repo, run_cli, "json")
    # Each byte that is not UTF-8 is the escape \udcXX, the surrogateescape form.
    assert '"path": "t/caf\\udce9 \\udcff.txt"' in out
    out.encode("utf-8")  # nothing a UTF-8 writer refuses
    (issue,) = json.loads(out)["targets"][0]["issues"]
    assert encode_path(issue["path"]) == raw
    assert issue["path"] in tree_paths(repo)
    _, sarif = check(repo, run_cli, "sarif")
    (result,) = json.loads(sarif)["runs"][0]["results"]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert unquote_to_bytes(uri) == raw
