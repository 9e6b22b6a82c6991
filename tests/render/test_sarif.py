"""SARIF 2.1.0: one rule per issue code, one result per issue, file locations."""

from __future__ import annotations

from bot.gate import ConfigIssue, Issue, IssueCode, Report, TargetReport
from bot.gate.codes import CODES
from bot.gate.report import empty_counts
from bot.paths import decode_path
from bot.render.sarif import report_to_sarif_dict


def sample() -> Report:
    issues = (
        Issue.of(IssueCode.FOREIGN_FILE, "t/notes.txt", "foreign"),
        Issue.of(
            IssueCode.IGNORE_SHADOWS_MANAGED, "t/.gittargetignore", "hides", line=3, pattern="*"
        ),
        Issue.of(IssueCode.FOREIGN_FILE, decode_path(b"t/caf\xe9 #1.txt"), "odd name"),
    )
    target = TargetReport("t", "t", issues, empty_counts())
    config = (ConfigIssue("unknown-key", "extra: unknown key"),)
    return Report("a" * 40, config, (target,))


def test_shape() -> None:
    sarif = report_to_sarif_dict(sample())
    assert sarif["version"] == "2.1.0"
    assert sarif["$schema"].endswith("sarif-2.1.0.json")
    (run,) = sarif["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    assert set(ids) >= {code.value for code in CODES}
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] in {"error", "warning"}
    results = run["results"]
    assert len(results) == 4
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in {"error", "warning"}
        (location,) = result["locations"]
        assert location["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert run["properties"] == {"revision": "a" * 40}


def test_locations() -> None:
    results = report_to_sarif_dict(sample())["runs"][0]["results"]
    by_uri = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r for r in results}
    assert set(by_uri) == {
        ".ichor.yaml",
        "t/notes.txt",
        "t/.gittargetignore",
        "t/caf%E9%20%231.txt",
    }
    region = by_uri["t/.gittargetignore"]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 3}
    assert by_uri["t/.gittargetignore"]["properties"] == {"target": "t", "pattern": "*"}
    assert "region" not in by_uri["t/notes.txt"]["locations"][0]["physicalLocation"]
    assert by_uri[".ichor.yaml"]["ruleId"] == "invalid-config"
