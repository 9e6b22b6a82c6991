"""``unused-ignore-pattern``: lines of the root ``.gittargetignore`` that match no entry.

A line "matches" an entry when the line on its own would ignore it (the entry's path or one
of its directories matches); what later lines decide does not matter, so a pattern undone by
a later ``!pattern`` is still in use, and a ``!pattern`` is in use when its pattern matches
an entry.

The lines in use come from the matcher's own pass over the entries (``IgnoreMatcher.survey``,
the pass that decides what is ignored), which tries each line at most once on each entry and
directory: lines that match nothing cost what matching alone costs, never a second pass (the
ignore file comes from the pull request, so its number of lines is the author's choice).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.gate.codes import IssueCode
from bot.gate.report import Issue
from bot.ignore.rules import IgnoreRule, Survey
from bot.paths import display_path


def unused_rules(rules: Sequence[IgnoreRule], survey: Survey) -> list[IgnoreRule]:
    """The ``rules`` (every pattern line that is applied) that match no path of the survey."""
    return [rule for rule in rules if rule.line not in survey.in_use]


def unused_pattern_issues(
    ignore_file: str, rules: Sequence[IgnoreRule], survey: Survey
) -> list[Issue]:
    """One warning per unused line, at that line of ``ignore_file``."""
    issues: list[Issue] = []
    for rule in unused_rules(rules, survey):
        message = f"pattern '{display_path(rule.pattern)}' matches no entry of the target"
        if rule.pattern[int(rule.negated) :][:1].isspace():
            message += "; its leading whitespace is part of the pattern"
        issues.append(
            Issue.of(
                IssueCode.UNUSED_IGNORE_PATTERN,
                ignore_file,
                message,
                line=rule.line,
                pattern=rule.pattern,
            )
        )
    return issues
