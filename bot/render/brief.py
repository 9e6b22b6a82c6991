"""One line per issue, ``path:line: code: message``: for editors' quickfix lists and grep.

A warning's message starts ``warning: `` (the word the other formats use), so a line that
refuses nothing does not read as one that does; the code stays where grep and tools find it.
"""

from __future__ import annotations

from bot.gate.codes import Severity
from bot.gate.report import Issue, Report
from bot.paths import display_path
from bot.render.text import config_issue_line, one_line


def _line(issue: Issue) -> str:
    where = display_path(issue.path) or "."
    if issue.line:
        where += f":{issue.line}"
    severity = "warning: " if issue.severity is Severity.WARNING else ""
    return f"{where}: {issue.kind.value}: {severity}{one_line(issue.message)}"


def report_to_brief(report: Report) -> str:
    """Every issue, sorted as in the report; nothing at all when there is none."""
    lines = [config_issue_line(i) for i in report.config_issues]
    for target in report.targets:
        lines.extend(_line(i) for i in sorted(target.issues, key=Issue.sort_key))
    return "".join(f"{line}\n" for line in lines)
