"""A value a person may write into a committed file is judged by one rule, whether it comes in
a comment command or through the change API: a comment could once write a bidirectional
override into YAML that the API refused with 422."""

from __future__ import annotations

import json

import pytest

from bot.commands import ApproveObject, RejectObject, parse_comment
from bot.web.changes_model import ChangeBody, read_body

VALUES = [
    "true",
    "déjà vu ✓",
    "a b",
    "ok\u202eevil",  # right-to-left override
    "\u2066fine\u2069",  # left-to-right isolate … pop
    "a\u200bb",  # zero-width space
    "a\u00a0b",  # no-break space
    "a\x00b",
    "a\x1bb",
    "a\u2028b",
]


def _api_refuses(**changes: object) -> bool:
    body = {
        "forge": "github",
        "repository": "acme/gitops",
        "verb": "approve",
        "object": {"kind": "ConfigMap", "namespace": "apps", "name": "web"},
        **changes,
    }
    return not isinstance(read_body(json.dumps(body).encode()), ChangeBody)


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@pytest.mark.parametrize("value", VALUES)
def test_a_field_value_is_refused_by_both_or_by_neither(value: str) -> None:
    parsed = parse_comment(f"/approve apps/web note={_quoted(value)}")
    comment_refuses = not any(isinstance(c, ApproveObject) for c in parsed.commands)
    assert comment_refuses == _api_refuses(fields={"note": value})
    if comment_refuses:
        (problem,) = parsed.problems
        assert problem.kind == "bad-field" and "U+" in problem.message


# A line separator ends a comment's line, and NUL hides it, before this rule is reached.
ONE_LINE = [v for v in VALUES if "\u2028" not in v and "\x00" not in v]


@pytest.mark.parametrize("value", [*ONE_LINE, "two\tcolumns"])
def test_a_reason_is_refused_by_both_or_by_neither(value: str) -> None:
    parsed = parse_comment(f"/reject apps/web {value}")
    comment_refuses = not any(isinstance(c, RejectObject) for c in parsed.commands)
    assert comment_refuses == _api_refuses(verb="reject", reason=value)
