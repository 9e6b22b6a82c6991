"""The report as JSON, exactly the shape of DESIGN 3.6."""

from __future__ import annotations

import json
from typing import Any

from bot.gate.report import ConfigIssue, Issue, Report, Role, TargetReport
from bot.paths import display_path

REPORT_VERSION = 1


def shown_target_path(path: str) -> str:
    return display_path(path) if path else "."


def _issue(issue: Issue) -> dict[str, Any]:
    return {
        "kind": issue.kind.value,
        "severity": issue.severity.value,
        "path": display_path(issue.path),
        "line": issue.line,
        "message": issue.message,
        "pattern": None if issue.pattern is None else display_path(issue.pattern),
    }


def _config_issue(issue: ConfigIssue) -> dict[str, Any]:
    return {"kind": issue.kind, "path": issue.path, "message": issue.message}


def _target(target: TargetReport) -> dict[str, Any]:
    return {
        "name": target.name,
        "path": shown_target_path(target.path),
        "verdict": target.verdict.value,
        "counts": {role.value: target.counts.get(role, 0) for role in Role},
        "issues": [_issue(i) for i in sorted(target.issues, key=Issue.sort_key)],
    }


def report_to_dict(report: Report) -> dict[str, Any]:
    return {
        "version": REPORT_VERSION,
        "revision": report.revision,
        "config_issues": [_config_issue(i) for i in report.config_issues],
        "targets": [_target(t) for t in report.targets],
    }


def report_to_json(report: Report) -> str:
    return json.dumps(report_to_dict(report), indent=2, ensure_ascii=False) + "\n"
