"""``unused-ignore-pattern``: lines of the root ``.gittargetignore`` that match no entry.

Pure, and built only on the matcher's public API. A line "matches" an entry when the line on
its own would ignore it (the entry's path or one of its directories matches); what later
lines decide does not matter, so a pattern undone by a later ``!pattern`` is still in use,
and a ``!pattern`` is in use when its pattern matches an entry.

Cost: one pass of the full matcher over the entries finds every line that decides an entry;
only the lines left (the unused ones, and the few overridden by a later line) are then tried
one by one, each stopping at its first match. That is never more than the matcher's own work
over the same entries, and for an ignore file whose lines are all in use it is one pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.gate.codes import IssueCode
from bot.gate.report import Issue
from bot.ignore import IgnoreMatcher, IgnoreRule
from bot.paths import display_path


def unused_rules(
    rules: Sequence[IgnoreRule], matcher: IgnoreMatcher, rel_paths: Sequence[str]
) -> list[IgnoreRule]:
    """The ``rules`` (every pattern line that is applied) that match none of ``rel_paths``."""
    if not rules:
        return []
    deciding = {rule.line for rule in _deciders(matcher, rel_paths)}
    left = [rule for rule in rules if rule.line not in deciding]
    return [rule for rule in left if not _matches_any(rule, rel_paths)]


def _deciders(matcher: IgnoreMatcher, rel_paths: Iterable[str]) -> Iterable[IgnoreRule]:
    for rel in rel_paths:
        rule = matcher.rule_for(rel)
        if rule is not None:
            yield rule


def _matches_any(rule: IgnoreRule, rel_paths: Iterable[str]) -> bool:
    positive = IgnoreRule(rule.line, rule.pattern[1:], negated=False) if rule.negated else rule
    alone = IgnoreMatcher((positive,))
    return any(alone.is_ignored(rel) for rel in rel_paths)


def unused_pattern_issues(
    ignore_file: str,
    rules: Sequence[IgnoreRule],
    matcher: IgnoreMatcher,
    rel_paths: Sequence[str],
) -> list[Issue]:
    """One warning per unused line, at that line of ``ignore_file``."""
    issues: list[Issue] = []
    for rule in unused_rules(rules, matcher, rel_paths):
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
