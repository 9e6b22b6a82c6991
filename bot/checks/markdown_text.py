"""Untrusted text as forge markdown that nothing in it can break out of. Pure.

Paths, messages, patterns and object names come from the repository under review, so they are
untrusted. In markdown every one of them goes through :func:`escape`: characters that markdown,
GFM tables or HTML would act on become numeric character references. Paths are wrapped in an
HTML ``<code>`` element rather than a backtick code span, because inside a code span no escape
works (``&#124;`` shows literally) while a table still splits cells on a bare ``|``, so a
backtick span cannot hold every name safely on GitHub, GitLab and Gitea alike.
"""

from __future__ import annotations

import re
import unicodedata

from bot.gate.codes import CODES
from bot.gate.report import Issue
from bot.paths import display_path

# One hostile name or message must not eat the budget the rest of a list needs.
MAX_PATH_SHOWN = 300
MAX_MESSAGE_SHOWN = 1000
MAX_FIX_SHOWN = 2000
SHORT_SHA = 7

# Markdown emphasis/code/links, GFM tables and strikethrough, HTML, GitHub math ($), emoji
# shortcodes and scheme autolinks (:).
_SPECIAL = frozenset("&<>|\\`*_~[]$:")
# Mentions (@user), issue and merge-request references (#1, !1) would notify people or post
# cross-references; a zero-width space after the sigil keeps forges from linking it.
_UNLINK = frozenset("@#!")
# In code, where nothing is linked but an email address still is (cmark-gfm finds those after
# decoding references), an empty <wbr> splits the text without changing what is copied.
_CODE_AT = "<wbr>&#64;"
_WWW = re.compile(r"(www)\.", re.IGNORECASE)  # GFM autolinks a bare www.host
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def printable(text: str, *, newlines: bool = False) -> str:
    """``text`` without invisible or unencodable characters (a lone surrogate from a name that
    is not UTF-8 would make the forge request fail); they are shown as escapes instead."""
    if text.isprintable():
        return text
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch == "\n" and newlines:
            out.append(ch)
        elif ch in "\t\r\n":
            out.append(" ")
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif unicodedata.category(ch) in _HIDDEN:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


def shorten(text: str, limit: int, *, middle: bool = False) -> str:
    if len(text) <= limit:
        return text
    if middle:  # a path keeps its start and its file name
        half = (limit - 1) // 2
        return text[:half] + "…" + text[len(text) - half :]
    return text[: limit - 1] + "…"


# The same rules as tables for one regular-expression pass (a large check renders thousands of
# strings; str.translate to strings of several characters is twice as slow).
_PROSE = {c: f"&#{ord(c)};" for c in _SPECIAL} | {c: c + "&#8203;" for c in _UNLINK}
_IN_CODE = {c: f"&#{ord(c)};" for c in _SPECIAL} | {"@": _CODE_AT}
_PROSE_CHARS = re.compile("[" + re.escape("".join(sorted(_PROSE))) + "]")
_CODE_CHARS = re.compile("[" + re.escape("".join(sorted(_IN_CODE))) + "]")


def _prose(match: re.Match[str]) -> str:
    return _PROSE[match.group()]


def _in_code(match: re.Match[str]) -> str:
    return _IN_CODE[match.group()]


def escape(text: str, *, code: bool) -> str:
    escaped = _CODE_CHARS.sub(_in_code, text) if code else _PROSE_CHARS.sub(_prose, text)
    return _WWW.sub(r"\1&#46;", escaped)


def inline_text(text: str, limit: int = MAX_MESSAGE_SHOWN) -> str:
    """Untrusted prose as inline markdown, on one line."""
    return escape(shorten(printable(text), limit), code=False)


def inline_path(path: str) -> str:
    """An untrusted path (or pattern) as inline code that no name can break out of."""
    shown = shorten(display_path(path), MAX_PATH_SHOWN, middle=True)
    return f"<code>{escape(shown, code=True)}</code>"


def inline_fix(issue: Issue) -> str:
    """What to do, as markdown. The code's own fix is ours. An issue's own fix names its files
    and often is a command, so it is inline code that copies exactly (prose escapes would put a
    zero-width space in a pasted name); one too long to show whole gives the code's fix."""
    shown = printable(issue.fix) if issue.fix is not None else ""
    if not shown or len(shown) > MAX_FIX_SHOWN:
        return CODES[issue.kind].fix
    return f"<code>{escape(shown, code=True)}</code>"


def short_sha(sha: str) -> str:
    return inline_path(sha[:SHORT_SHA])
