"""The comment-command parser against the table in fixtures/commands/parse_cases.yaml, plus
the bounds (body and line length, ten command lines) and what every message says."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from bot.commands import (
    MAX_BODY,
    MAX_COMMANDS,
    MAX_LINE,
    VERBS,
    ApproveObject,
    Command,
    CommandProblem,
    Help,
    IgnorePattern,
    ParsedComment,
    Recheck,
    RejectObject,
    parse_comment,
    usage,
)
from tests.conftest import load_fixture

CASES: list[dict[str, Any]] = load_fixture("commands/parse_cases.yaml")
BY_NAME = {case["name"]: case for case in CASES}


def command_dict(command: Command) -> dict[str, Any]:
    """A command as the table writes it: its class name, then its fields (tuples as lists)."""
    out: dict[str, Any] = {"type": type(command).__name__}
    for field in dataclasses.fields(command):
        value = getattr(command, field.name)
        out[field.name] = [list(pair) for pair in value] if field.name == "fields" else value
    return out


def problem_dict(problem: CommandProblem) -> dict[str, Any]:
    return {
        "line": problem.line,
        "kind": problem.kind,
        "verb": problem.verb,
        "argument": problem.argument,
    }


def test_the_table_is_large_and_names_are_unique() -> None:
    assert len(CASES) >= 70
    assert len(BY_NAME) == len(CASES)
    assert sum("source" in case for case in CASES) >= 9


@pytest.mark.parametrize("name", [case["name"] for case in CASES])
def test_case(name: str) -> None:
    case = BY_NAME[name]
    parsed = parse_comment(case["body"])
    assert [command_dict(c) for c in parsed.commands] == case["commands"]
    assert [problem_dict(p) for p in parsed.problems] == case.get("problems", [])
    assert parsed.truncated is case.get("truncated", False)
    for problem in parsed.problems:
        check_message(problem)


def check_message(problem: CommandProblem) -> None:
    """One printable line naming the argument; a usage error ends with the verb's usage."""
    message = problem.message
    assert message.isprintable(), message
    assert message.startswith(f"/{problem.verb}: ")
    if problem.argument is not None:
        shown = problem.argument if problem.argument.isprintable() else None
        if shown is not None and len(shown) < 50:
            assert f"'{shown}'" in message
    if problem.kind == "unknown-verb":
        assert "/help" in message
    else:
        verb = next(v for v in VERBS if v == problem.verb)
        assert message.endswith(f". Usage: {usage(verb)}")


def test_every_problem_kind_is_in_the_table() -> None:
    kinds = {p["kind"] for case in CASES for p in case.get("problems", [])}
    assert kinds == {
        "unknown-verb",
        "extra-argument",
        "missing-argument",
        "bad-object",
        "bad-namespace",
        "bad-name",
        "bad-kind",
        "bad-field",
        "bad-reason",
        "duplicate-field",
        "bad-pattern",
        "bad-quote",
        "bad-target",
    }


def test_missing_argument_messages_say_what_is_missing() -> None:
    said = {
        body: parse_comment(body).problems[0].message
        for body in ("/delete", "/delete apps/web", "/delete Deployment", "/reject", "/ignore")
    }
    assert said["/delete"].startswith("/delete: needs <kind> <ns>/<name>.")
    assert said["/delete apps/web"].startswith("/delete: needs <kind> before <ns>/<name>.")
    assert said["/delete Deployment"].startswith("/delete: needs <ns>/<name> after <kind>.")
    assert said["/reject"].startswith("/reject: needs <ns>/<name>.")
    assert said["/ignore"].startswith("/ignore: needs <pattern>.")
    dangling = parse_comment("/ignore *.bak in").problems[0].message
    assert dangling.startswith("/ignore: 'in' needs a <target> after it.")


def test_a_message_escapes_and_clips_what_it_repeats() -> None:
    (problem,) = parse_comment('/ignore "a\x00b"').problems
    assert "\x00" not in problem.message and "\\x00" in problem.message
    (long,) = parse_comment("/recheck " + "x" * 500).problems
    assert long.argument == "x" * 500
    assert len(long.message) < 120 and "…" in long.message


def test_each_command_says_its_verb() -> None:
    parsed = parse_comment(
        "/help\n/recheck\n/approve\n/approve cancel\n/approve a/b\n/reject a/b\n"
        "/delete Kind a/b\n/ignore x"
    )
    assert [c.verb for c in parsed.commands] == [
        "help",
        "recheck",
        "approve",
        "approve",
        "approve",
        "reject",
        "delete",
        "ignore",
    ]
    assert len(set(parsed.commands)) == len(parsed.commands)  # frozen values, hashable
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.commands[0].line = 2  # type: ignore[misc]


def test_only_the_first_ten_command_lines_are_read() -> None:
    body = "\n".join(f"/approve ns/o{i}" for i in range(30))
    parsed = parse_comment(body)
    assert len(parsed.commands) == MAX_COMMANDS == 10
    assert parsed.truncated
    assert [c.name for c in parsed.commands if isinstance(c, ApproveObject)] == [
        f"o{i}" for i in range(10)
    ]


def test_a_body_is_read_only_within_its_bound() -> None:
    filler = "x" * (MAX_BODY - 12) + "\n"  # one line, too long to be a command
    assert len(filler + "/recheck\n") < MAX_BODY < len(filler + "/recheck\n/help")
    assert parse_comment(filler + "/recheck\n/help").commands == (Recheck(2),)
    # The bound falls inside a line: the cut line is not read, its words could be cut too.
    assert parse_comment(filler + "/ignore abcdefghij-klm") == ParsedComment((), (), False)
    # The bound falls on a line break: the whole last line is read.
    exact = filler + "/ignore abc"
    assert len(exact) == MAX_BODY
    assert parse_comment(exact + "\nmore").commands == (IgnorePattern(2, "abc", None),)
    assert parse_comment(exact + "\r\n/help").commands == (IgnorePattern(2, "abc", None),)


def test_a_line_over_the_bound_is_not_a_command() -> None:
    at_bound = "/ignore " + "a" * (MAX_LINE - len("/ignore "))
    assert len(at_bound) == MAX_LINE
    assert parse_comment(at_bound).commands == (IgnorePattern(1, "a" * (MAX_LINE - 8), None),)
    over = at_bound + "a"
    assert parse_comment(over + "\n/help") == ParsedComment((Help(2),), (), truncated=False)
    # Trailing spaces count: the line as sent is over the bound.
    assert parse_comment("/help" + " " * MAX_LINE).commands == ()


def test_a_long_fence_line_still_opens_a_fence() -> None:
    body = "```" + "x" * (MAX_LINE * 2) + "\n/approve\n```\n/help"
    assert parse_comment(body).commands == (Help(4),)


def test_reject_reason_is_the_text_as_written() -> None:
    (command,) = parse_comment("/reject apps/web   a\tb  in prod").commands
    assert command == RejectObject(1, "apps", "web", "a\tb", "prod")
