"""A seeded fuzz of the comment-command parser (hypothesis is not installed): it never
raises, reads at most ten command lines, and its hiding rules hold whatever the body."""

from __future__ import annotations

import random

import pytest

from bot.commands import (
    MAX_BODY,
    MAX_COMMANDS,
    VERBS,
    ApproveObject,
    DeleteObject,
    IgnorePattern,
    ParsedComment,
    RejectObject,
    parse_comment,
)

# Pieces that reach every branch of the block scan and the argument grammar.
PIECES = (
    "/approve", "/approve ", "/ichor", "/ichor ", "/recheck", "/help", "/reject ", "/delete ",
    "/ignore ", "/lgtm", "/", "cancel", "in ", " in prod", "apps/web", "_/x", "Deployment.apps ",
    "a=1 ", 'note="', '"', '\\"', "\\", "=", " ", "  ", "\t", "\n", "\r\n", "\r", "\n\n",
    "```", "~~~", "````", "> ", ">", "    ", "<!--", "-->", "`", "@ichor-bot ", "é", "🚀",
    "\u00a0", "\u2028", "\x00", "x", "Prod", "-",
)  # fmt: skip
SEEDS = 2_000


def _body(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 60)))


def _check(parsed: ParsedComment, body: str) -> None:
    assert len(parsed.commands) + len(parsed.problems) <= MAX_COMMANDS
    lines = body[:MAX_BODY].replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
    seen = [c.line for c in parsed.commands] + [p.line for p in parsed.problems]
    assert all(1 <= line <= lines for line in seen)
    assert len(set(seen)) == len(seen)  # one result per line
    assert [c.line for c in parsed.commands] == sorted(c.line for c in parsed.commands)
    for command in parsed.commands:
        assert command.verb in VERBS
        if isinstance(command, ApproveObject | RejectObject | DeleteObject):
            assert command.name and "/" not in command.name
        if isinstance(command, IgnorePattern):
            assert command.pattern and "\n" not in command.pattern and "\x00" not in command.pattern
    for problem in parsed.problems:
        assert problem.message.isprintable()


def test_fuzz_never_raises_and_keeps_its_bounds() -> None:
    rng = random.Random(13)
    for _ in range(SEEDS):
        body = _body(rng)
        _check(parse_comment(body), body)


def test_fuzz_hidden_bodies_yield_nothing() -> None:
    # Quoted, indented or commented out, the same body holds no command line at all.
    rng = random.Random(1313)
    for _ in range(SEEDS // 4):
        lines = _body(rng).replace("\r\n", "\n").replace("\r", "\n").split("\n")
        for hidden in (
            "\n".join("> " + line for line in lines),
            "\n".join("    " + line for line in lines),
            "<!--\n" + "\n".join(line.replace("-->", "") for line in lines) + "\n-->",
        ):
            assert parse_comment(hidden) == ParsedComment((), (), truncated=False), hidden


@pytest.mark.parametrize(
    "body",
    [
        "`" * MAX_BODY,
        "```\n" * (MAX_BODY // 4),
        "~~~~\n```\n" * (MAX_BODY // 9),
        "> " * (MAX_BODY // 2),
        ">\n" * (MAX_BODY // 2),
        "<!--" * (MAX_BODY // 4),
        "a <!-- b\n" * (MAX_BODY // 9) + "-->",
        ("/ignore " + '"\\"' * 1_300 + "\n") * 16,
        ("/approve a/b " + 'x="' * 1_300 + "\n") * 16,
        "/ichor frob\n" * (MAX_BODY // 12),
        "/lgtm\n" * (MAX_BODY // 6),
        "\r" * MAX_BODY,
        " " * (MAX_BODY - 1) + "/approve",
    ],
)
def test_a_full_sized_hostile_body(body: str) -> None:
    _check(parse_comment(body * 2), body * 2)
