"""``--format brief``: ``path:line: code: message``, one line per issue, nothing else."""

from __future__ import annotations

import re

from bot.gate.codes import IssueCode
from bot.gate.report import ConfigIssue, Issue, Report, TargetReport, empty_counts
from bot.render.brief import report_to_brief

_LINE = re.compile(r"^(?P<path>[^:]+)(?::(?P<line>\d+))?: (?P<code>[a-z-]+): (?P<message>.+)$")


def test_one_parsable_line_per_issue() -> None:
    issues = (
        Issue.of(IssueCode.INVALID_YAML, "t/b.yaml", "line 4: bad", line=4),
        Issue.of(IssueCode.FOREIGN_FILE, "t/a\ttab.txt", "not YAML"),
    )
    root = TargetReport(
        "root", "", (Issue.of(IssueCode.FOREIGN_SYMLINK, "", "a link"),), empty_counts()
    )
    report = Report(
        None,
        (ConfigIssue("unknown-key", "x: unknown key", line=3),),
        (TargetReport("t", "t", issues, empty_counts()), root),
    )
    lines = report_to_brief(report).splitlines()
    assert lines == [
        ".ichor.yaml:3: unknown-key: x: unknown key",
        "t/a\\ttab.txt: foreign-file: not YAML",  # sorted by path; control characters escaped
        "t/b.yaml:4: invalid-yaml: line 4: bad",
        ".: foreign-symlink: a link",
    ]
    assert all(_LINE.match(line) for line in lines)


def test_nothing_for_a_clean_report() -> None:
    assert report_to_brief(Report(None, (), (TargetReport("t", "t", (), empty_counts()),))) == ""


def test_a_message_never_breaks_the_line() -> None:
    issue = Issue.of(IssueCode.INVALID_YAML, "t/a.yaml", "bad\nnext\rline", line=2)
    report = Report(None, (), (TargetReport("t", "t", (issue,), empty_counts()),))
    assert report_to_brief(report) == "t/a.yaml:2: invalid-yaml: bad\\nnext\\rline\n"
