"""The lines of a comment that may hold a command: a simplified CommonMark block scan.

A command starts a line, so only the block structure matters: fenced code (``` or ~~~, closed
by a fence of the same character at least as long, or running to the end when never closed),
indented code (a line indented by 4 columns or more, a tab counting to the next multiple of
4), quoted lines (``>`` after at most 3 spaces, however deeply nested), and HTML comments,
which hide the bot's own markers. Inline code needs no rule: a line that starts with a
backtick does not start with ``/``.

Simplifications, each on the side of reading fewer lines: a quote's lazy continuation line
(an unquoted line right after a quoted one) is read, as the person typed it at the start of a
line; an inline ``<!--`` with a ``-->`` anywhere later hides everything up to the line that
closes it, even across paragraphs. One pass, linear in the body.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_BODY = 65_536  # characters of a body that are read at all
MAX_LINE = 4_096  # a longer line is never a command (it still counts for fences and comments)

_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})(.*)")
_COMMENT_OPEN, _COMMENT_CLOSE = "<!--", "-->"


def split_lines(body: str) -> list[str]:
    """The body's lines within ``MAX_BODY``, CRLF and lone CR as line breaks. A line the bound
    cuts is dropped: its arguments could have been cut, and would then name something else."""
    clipped = body[:MAX_BODY]
    lines = clipped.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if len(body) > MAX_BODY and body[MAX_BODY] not in "\r\n":
        lines.pop()
    return lines


def _indent(line: str) -> tuple[int, int]:
    """(columns, characters) of the line's leading spaces and tabs, stopping at 4 columns."""
    columns = 0
    for at, ch in enumerate(line):
        if columns >= 4:
            return columns, at
        if ch == " ":
            columns += 1
        elif ch == "\t":
            columns += 4 - columns % 4
        else:
            return columns, at
    return columns, len(line)


def command_lines(body: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) of every line that starts with ``/`` outside code, quotes
    and HTML comments, within the bounds; the text has its leading spaces and trailing
    whitespace removed, and is cut before an inline ``<!--``."""
    lines = split_lines(body)
    last_close = max(
        (i for i, line in enumerate(lines) if _COMMENT_CLOSE in line),
        default=-1,
    )
    fence: str | None = None  # the opening fence's run, while inside a fenced block
    in_comment = False
    for index, raw in enumerate(lines):
        if in_comment:
            in_comment = _COMMENT_CLOSE not in raw
            continue
        columns, start = _indent(raw)
        text = raw[start:]
        if fence is not None:
            if columns < 4 and _closes(text, fence):
                fence = None
            continue
        if columns >= 4:
            continue  # indented code
        opened = _FENCE_OPEN.fullmatch(text)
        if opened and not (opened[1][0] == "`" and "`" in opened[2]):
            fence = opened[1]
            continue
        opens = text.find(_COMMENT_OPEN)
        if opens >= 0 and _COMMENT_CLOSE not in text[opens + 2 :]:
            # Unclosed on this line: a comment when a later line closes it; at the start of
            # a line (an HTML block) it runs to the end even unclosed, as CommonMark says.
            in_comment = index < last_close or opens == 0
        if opens == 0 or text.startswith(">") or not text.startswith("/"):
            continue
        if len(raw) > MAX_LINE:
            continue
        yield index + 1, (text[:opens] if opens >= 0 else text).rstrip()


def _closes(text: str, fence: str) -> bool:
    run = len(text) - len(text.lstrip(fence[0]))
    return run >= len(fence) and not text[run:].strip(" \t")
