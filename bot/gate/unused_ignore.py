"""``unused-ignore-pattern``: lines of the root ``.gittargetignore`` that match no entry.

Pure, and built only on the matcher's public API. A line "matches" an entry when the line on
its own would ignore it (the entry's path or one of its directories matches); what later
lines decide does not matter, so a pattern undone by a later ``!pattern`` is still in use,
and a ``!pattern`` is in use when its pattern matches an entry.

Cost: one pass of the full matcher over the entries finds every line that decides an entry.
The lines left (the unused ones, and the few a later line overrides) are matched together in
a second pass, which keeps only the entries one of them matches; each of those lines is then
tried alone on just those entries, stopping at its first match. So lines that match nothing
cost one pass over the entries, whatever their number, and the rest is bounded by the
entries a left-over line matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.gate.codes import IssueCode
from bot.gate.report import Issue
from bot.ignore.rules import IgnoreMatcher, IgnoreRule
from bot.paths import display_path


def unused_rules(
    rules: Sequence[IgnoreRule], matcher: IgnoreMatcher, rel_paths: Sequence[str]
) -> list[IgnoreRule]:
    """The ``rules`` (every pattern line that is applied) that match none of ``rel_paths``."""
    if not rules:
        return []
    deciding = {rule.line for rule in _deciders(matcher, rel_paths)}
    left = [_positive(rule) for rule in rules if rule.line not in deciding]
    if not left:
        return []
    # Without negations, a path matches the lines together exactly when one of them matches it.
    together = IgnoreMatcher(left)
    matched = [rel for rel in rel_paths if together.is_ignored(rel)]
    unused = {rule.line for rule in left if not _matches_any(rule, matched)}
    return [rule for rule in rules if rule.line in unused]


def _positive(rule: IgnoreRule) -> IgnoreRule:
    """The line's pattern without its ``!``: what it matches, whatever it then decides."""
    return IgnoreRule(rule.line, rule.pattern[1:], negated=False) if rule.negated else rule


def _deciders(matcher: IgnoreMatcher, rel_paths: Iterable[str]) -> Iterable[IgnoreRule]:
    for rel in rel_paths:
        rule = matcher.rule_for(rel)
        if rule is not None:
            yield rule


def _matches_any(rule: IgnoreRule, rel_paths: Iterable[str]) -> bool:
    alone = IgnoreMatcher((rule,))
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
