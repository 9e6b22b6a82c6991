"""Go regexp syntax in linear time: the answers Go gives, and no time for hostile patterns."""

from __future__ import annotations

import time

import pytest

from bot.gate.content.goregex import Budget, Unsupported, compile_pattern, search


def matches(pattern: str, text: str) -> bool:
    return search(compile_pattern(pattern), text)


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        ("^(data|stringData)$", "stringData", True),
        ("^(data|stringData)$", "metadata", False),
        ("^(data|stringData)$", "data\n", False),  # Go's $ is the end of the text only
        # (?i) in mid-pattern, an error in Python's re, is the flag for the rest of the group.
        ("((?i)(pass|secret($|[^N])|key|^data$))", "userKey", True),
        ("((?i)(pass|secret($|[^N])|key|^data$))", "secretName", False),
        ("((?i)(pass|secret($|[^N])|key|^data$))", "PASSWORD", True),
        ("(?i:a)B", "Ab", False),
        (r"^(api_key|credentials\.json)$", "credentialsxjson", False),
        ("^(.*_secret$|.*_password$)$", "db_password", True),
        ("a{2,3}b", "xaab", True),
        ("a{2,3}b", "ab", False),
        (r"\bkey\b", "the key", True),
        (r"\bkey\b", "keys", False),
        ("[[:upper:]][^a-c]", "Xd", True),
        ("(?P<n>x)+y", "xxy", True),
        ("a|", "", True),
        (".", "\n", False),
        ("(?s).", "\n", True),
        ("(?m)^b$", "a\nb\nc", True),
    ],
)
def test_answers_as_go(pattern: str, text: str, found: bool) -> None:
    assert matches(pattern, text) is found


@pytest.mark.parametrize(
    "pattern", [r"\pL", "(?<=a)b", "a**", "(a", "[a", "a{1001}", "\\", r"\Qx\E", "x" * 1001]
)
def test_what_is_not_read_is_said(pattern: str) -> None:
    with pytest.raises(Unsupported):
        compile_pattern(pattern)


def test_hostile_patterns_are_linear() -> None:
    start = time.perf_counter()
    assert not matches("(a*)*b", "a" * 5000)
    assert not matches("(x+x+)+y", "x" * 5000)
    assert time.perf_counter() - start < 2  # backtracking would take longer than the universe


def test_a_budget_ends_the_search() -> None:
    with pytest.raises(Unsupported):
        search(compile_pattern("a{500}b"), "a" * 10_000, Budget(100_000))
