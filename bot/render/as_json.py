"""The report as JSON, exactly the shape of design.md 3.6.

Paths and patterns are the real names, not the escaped display form, so a tool reading the
report finds the file. A name that is not UTF-8 is held as a ``surrogateescape`` string: each
byte that is not part of valid UTF-8 is the lone surrogate U+DC80+byte, written as the JSON
escape ``\\udcXX``. Valid UTF-8 never decodes to these, so the form is unambiguous and
reversible (Python: ``json.loads`` then ``.encode("utf-8", "surrogateescape")``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from bot.gate.report import ConfigIssue, Issue, Report, Role, TargetReport

REPORT_VERSION = 1

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def report_path(path: str) -> str:
    """A target path as the report writes it: ``"."`` for the repository root."""
    return path or "."


def dumps(data: Any) -> str:
    """JSON text that any UTF-8 writer accepts, lone surrogates written as ``\\udcXX``.

    With ``ensure_ascii=False`` json leaves every non-ASCII character as it is, so a lone
    surrogate can only appear inside a string literal, where its escape means the same.
    """
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def _issue(issue: Issue) -> dict[str, Any]:
    return {
        "kind": issue.kind.value,
        "severity": issue.severity.value,
        "path": issue.path,
        "line": issue.line,
        "message": issue.message,
        "pattern": issue.pattern,
    }


def _config_issue(issue: ConfigIssue) -> dict[str, Any]:
    return {"kind": issue.kind, "path": issue.path, "message": issue.message}


def _target(target: TargetReport) -> dict[str, Any]:
    return {
        "name": target.name,
        "path": report_path(target.path),
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
    return dumps(report_to_dict(report))
