"""Line comments from a comparison: which new issues sit on lines the change touches (pure).

A finding's fingerprint is stable across pushes — issue code, path, pattern and the message
with line numbers taken out (the message names the object: ``Secret 'db' ...``) — so adapters
can recognise a finding they already commented on, whatever moved around it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from bot.checks.compare import CheckComparison
from bot.checks.render import inline_path, inline_text
from bot.forges.base import LineFinding
from bot.gate.codes import CODES, Severity
from bot.gate.report import Issue

_LINE_NUMBERS = re.compile(r"\bline \d+\b|:\d+\b")
_ICON = {Severity.ERROR: "❌", Severity.WARNING: "⚠️"}


def fingerprint(issue: Issue) -> str:
    message = _LINE_NUMBERS.sub("line N", issue.message)
    raw = "\0".join((issue.kind.value, issue.path, issue.pattern or "", message))
    return hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def finding_body(issue: Issue) -> str:
    info = CODES[issue.kind]
    return (
        f"{_ICON[issue.severity]} **`{issue.kind.value}`** — {inline_text(issue.message)}\n\n"
        f"**Fix:** {info.fix}\n\n"
        f"<sub>ichor/acceptance · {inline_path(issue.path)}</sub>"
    )


def line_findings(
    comparison: CheckComparison, touched_lines: Mapping[str, frozenset[int]]
) -> list[LineFinding]:
    """New issues on lines the change touches (an issue without a line counts as line 1),
    one per fingerprint, in report order."""
    out: list[LineFinding] = []
    seen: set[str] = set()
    for target in comparison.targets:
        for issue in target.new_issues:
            line = issue.line or 1
            if line not in touched_lines.get(issue.path, frozenset()):
                continue
            key = fingerprint(issue)
            if key in seen:
                continue
            seen.add(key)
            out.append(LineFinding(key, issue.path, line, finding_body(issue)))
    return out
