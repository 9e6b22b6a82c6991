"""The bot's replies to commands: Markdown built from values, one reply per comment.

A reply is written only when a person must read something (design.md 5): a refusal and why, a
usage error, help, a result. Everything a person or a forge wrote (error texts, patterns) is
shown as an indented code block, which Markdown never interprets, so it cannot mention
anyone, link anywhere or hide the rest of the reply.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.commands.command import CommandProblem, Verb

# GitHub takes 65,536 characters per comment; a reply stays far below.
MAX_REPLY_CHARS = 30_000
_MAX_QUOTED = 2_000


def quoted(text: str) -> str:
    """``text`` as an indented code block: shown literally, whatever it holds."""
    clipped = text if len(text) <= _MAX_QUOTED else text[:_MAX_QUOTED] + " …"
    lines = clipped.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join("    " + "".join(c if c.isprintable() else "?" for c in ln) for ln in lines)


def refused(verb: Verb, why: str) -> str:
    return f"`/{verb}` was not run: {why}."


def lookup_failed(verb: Verb, actor: str, error: str) -> str:
    """A permission lookup that failed: a refusal that says so, never a silent denial."""
    return (
        f"`/{verb}` was not run: the permission of @{actor} on this repository could not be"
        " checked, and a lookup that fails never counts as permission. The forge said:\n\n"
        + quoted(error)
    )


def usage_problems(problems: Sequence[CommandProblem]) -> str:
    items = "\n".join(f"- line {p.line}: {plain(p.message)}" for p in problems)
    return "Some command lines could not be read, so they were not run:\n\n" + items


def failed(verb: Verb, error: str) -> str:
    return f"`/{verb}` could not be completed; nothing was changed. The error:\n\n" + quoted(error)


def compose(sections: Iterable[str]) -> str | None:
    """One reply of every section, or None when there is nothing to say."""
    body = "\n\n---\n\n".join(s for s in sections if s)
    if not body:
        return None
    if len(body) > MAX_REPLY_CHARS:
        body = body[:MAX_REPLY_CHARS] + "\n\n… (cut: the reply was too long)"
    return body


def plain(text: str) -> str:
    """A parser message (already one printable line) with Markdown's active characters made
    literal, so a quoted argument cannot format or mention."""
    return "".join(f"&#{ord(c)};" if c in "\\`*_[]<>&@#|~!" else c for c in text)
