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
from bot.checks.markdown_text import inline_fix, inline_path, inline_text
from bot.forges.base import CHECK_NAME, LineFinding
from bot.gate.codes import Severity
from bot.gate.report import Issue

# Per changed file, the head-side lines the change adds or modifies; None for a file the
# change adds, every line of which is new.
TouchedLines = Mapping[str, "frozenset[int] | None"]
_LINE_NUMBERS = re.compile(r"\bline \d+\b|:\d+\b")
_ICON = {Severity.ERROR: "❌", Severity.WARNING: "⚠️"}


def fingerprint(issue: Issue) -> str:
    message = _LINE_NUMBERS.sub("line N", issue.message)
    raw = "\0".join((issue.kind.value, issue.path, issue.pattern or "", message))
    return hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def finding_body(issue: Issue) -> str:
    return (
        f"{_ICON[issue.severity]} **`{issue.kind.value}`** — {inline_text(issue.message)}\n\n"
        f"**Fix:** {inline_fix(issue)}\n\n"
        f"<sub>{CHECK_NAME} · {inline_path(issue.path)}</sub>"
    )


def line_findings(comparison: CheckComparison, touched_lines: TouchedLines) -> list[LineFinding]:
    """New issues on lines the change touches (an issue without a line counts as line 1),
    one per fingerprint, in report order."""
    out: list[LineFinding] = []
    seen: set[str] = set()
    for target in comparison.targets:
        for issue in target.new_issues:
            line = issue.line or 1
            if issue.path not in touched_lines:
                continue
            lines = touched_lines[issue.path]
            if lines is not None and line not in lines:
                continue
            key = fingerprint(issue)
            if key in seen:
                continue
            seen.add(key)
            out.append(LineFinding(key, issue.path, line, finding_body(issue)))
    return out
