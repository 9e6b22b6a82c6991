"""``IgnoreMatcher.survey``: ``rule_for`` of every path, and the lines in use, in one pass.

Checked on the differential test's generated cases (which ``test_differential`` holds against
git) against the definitions: ``rules`` is what ``rule_for`` answers, and a line is in use when
its pattern alone (without its ``!``) would ignore one of the paths.
"""

from __future__ import annotations

import random

from bot.ignore.rules import IgnoreMatcher, IgnoreRule, read_rules
from bot.paths import decode_path
from tests.ignore.test_differential import EDGE_CASES, SEED, _patterns, _tree

CASES = 600


def _positive(rule: IgnoreRule) -> IgnoreRule:
    return IgnoreRule(rule.line, rule.pattern[1:], negated=False) if rule.negated else rule


def _in_use(rules: tuple[IgnoreRule, ...], paths: list[str]) -> frozenset[int]:
    alone = [(rule.line, IgnoreMatcher((_positive(rule),))) for rule in rules]
    return frozenset(line for line, m in alone if any(m.is_ignored(path) for path in paths))


def _cases() -> list[tuple[str, list[str]]]:
    rng = random.Random(SEED + 1)
    cases = [(decode_path(text), [decode_path(f) for f in files]) for text, files in EDGE_CASES]
    for _ in range(CASES):
        files = _tree(rng)
        # Several generated files' worth of lines, so that lines override each other.
        text = b"".join(_patterns(rng, files) + b"\n" for _ in range(rng.randint(1, 4)))
        cases.append((decode_path(text), [decode_path(f) for f in files]))
    return cases


def test_survey_decides_like_rule_for_and_finds_the_lines_in_use() -> None:
    rng = random.Random(SEED)
    failures = []
    for number, (text, paths) in enumerate(_cases()):
        rules = read_rules(text)
        matcher = IgnoreMatcher(rules)
        # Earlier queries leave directories walked (some of them below an ignored one).
        for path in rng.sample(paths, rng.randint(0, len(paths))):
            matcher.rule_for(path)
        survey = matcher.survey(paths)
        fresh = IgnoreMatcher(rules)
        expected = {path: fresh.rule_for(path) for path in paths}
        if survey.rules != expected or survey.in_use != _in_use(matcher.rules, paths):
            failures.append(f"case {number}: {text!r} on {paths!r}")
        assert {path: matcher.rule_for(path) for path in paths} == expected
    assert not failures, f"{len(failures)} cases:\n" + "\n".join(failures[:10])


def test_lines_in_use_are_those_of_the_paths_surveyed() -> None:
    matcher = IgnoreMatcher(read_rules("/a/\n/b/x\n*.txt\n!keep.txt\nd/\n"))
    assert matcher.survey(["a/f", "b/x"]).in_use == {1, 2}
    assert matcher.survey(["b/x/y", "c/keep.txt"]).in_use == {2, 3, 4}
    # Below an ignored directory the lines still count: ``d/`` ignores ``a/d``, and so does ``/a/``.
    survey = matcher.survey(["a/d/n.txt"])
    assert survey.in_use == {1, 3, 5}
    assert survey.rules == {"a/d/n.txt": matcher.rules[0]}


def test_a_survey_without_rules_or_paths() -> None:
    assert IgnoreMatcher.empty().survey(["a", "b/c"]).rules == {"a": None, "b/c": None}
    assert IgnoreMatcher.empty().survey(["a"]).in_use == frozenset()
    assert IgnoreMatcher(read_rules("a\n")).survey([]).in_use == frozenset()
