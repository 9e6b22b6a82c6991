"""The small markdown subset the bot's own summaries use, rendered to safe HTML for the status
page: tables, headings, lists, paragraphs, ``**bold**``, ``*emphasis*``, code spans and ``<code>``
elements. The emoji the summaries put beside a word (✅ accepted, ❌ refused) are shown as the
text symbols most fonts have (✓, ✗, ⚠), marked as decoration (``aria-hidden``): the word beside
says it, and a machine without an emoji font shows no empty box.

Pure and linear in the input. Nothing in the input becomes markup except by these rules:
every piece of text is unescaped once (the summaries carry names as character references)
and escaped again, so a name like ``<script>`` shows as text and no tag, attribute or link
from the input ever reaches the page. Anything else (links, raw HTML) shows as text.
"""

from __future__ import annotations

import html
import re

from markupsafe import Markup

_SEPARATOR = re.compile(r"\|(?: *:?-+:? *\|)+")
_HEADING = re.compile(r"(#{1,6}) +(.*)")
_ITEM = re.compile(r"( *)[-*] +(.*)")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
# One asterisk on each side, hugging the text (``*(already on base)*``); a lone ``*`` in a
# glob or a sentence stays as it is.
_EMPHASIS = re.compile(r"(?<![*\w])\*(?=[^\s*])([^*]*?[^\s*])\*(?![*\w])")
_GLYPHS = {"✅": "✓", "❌": "✗", "⚠️": "⚠", "⚠": "⚠", "➖": "–", "✋": "⚑"}
_GLYPH = re.compile("|".join(sorted(_GLYPHS, key=len, reverse=True)))
_CODE_OPEN, _CODE_CLOSE = "<code>", "</code>"


_HOLE = "\x00"  # stands for a code span while bold is matched; never in escaped text


def _text(raw: str) -> str:
    return html.escape(html.unescape(raw).replace(_HOLE, ""), quote=False)


def inline(line: str) -> str:
    """One line: code spans and ``<code>`` elements as code, the rest as text; ``**bold**``
    may enclose code."""
    out: list[str] = []
    codes: list[str] = []
    at = 0
    while at < len(line):
        tick = line.find("`", at)
        tag = line.find(_CODE_OPEN, at)
        starts = [s for s in (tick, tag) if s >= 0]
        if not starts:
            break
        start = min(starts)
        if start == tag:
            end = line.find(_CODE_CLOSE, start + len(_CODE_OPEN))
            body, after = start + len(_CODE_OPEN), end + len(_CODE_CLOSE)
        else:
            end = line.find("`", start + 1)
            body, after = start + 1, end + 1
        if end < 0:
            break  # unclosed: the rest is text (and nothing is searched twice)
        out.append(_text(line[at:start]))
        code = line[body:end]
        # In an element, references are decoded (and <wbr> is only a line-break hint); in a
        # backtick span, the text is literal.
        shown = html.unescape(code.replace("<wbr>", "")) if start == tag else code
        codes.append(f"<code>{html.escape(shown, quote=False)}</code>")
        out.append(_HOLE)
        at = after
    out.append(_text(line[at:]))
    bold = _BOLD.sub(r"<strong>\1</strong>", "".join(out))
    bold = _EMPHASIS.sub(r"<em>\1</em>", bold)
    bold = _GLYPH.sub(
        lambda m: f'<span class="glyph" aria-hidden="true">{_GLYPHS[m.group(0)]}</span>', bold
    )
    pieces = bold.split(_HOLE)
    return pieces[0] + "".join(code + rest for code, rest in zip(codes, pieces[1:], strict=True))


def _cells(row: str) -> list[str]:
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [c.strip() for c in inner.split("|")]


def _table(rows: list[str]) -> str:
    header = len(rows) > 1 and _SEPARATOR.fullmatch(rows[1].strip()) is not None
    parts = ["<table>"]
    if header:
        parts.append("<thead><tr>")
        parts += [f"<th>{inline(c)}</th>" for c in _cells(rows[0])]
        parts.append("</tr></thead>")
        rows = rows[2:]
    parts.append("<tbody>")
    for row in rows:
        parts.append("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in _cells(row)) + "</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def render(markdown: str) -> Markup:
    out: list[str] = []
    paragraph: list[str] = []
    table: list[str] = []
    depth = 0  # open <ul> elements

    def close(*, lists: bool = True) -> None:
        nonlocal depth
        if paragraph:
            out.append("<p>" + " ".join(inline(p) for p in paragraph) + "</p>")
            paragraph.clear()
        if table:
            out.append(_table(table))
            table.clear()
        if lists:
            out.append("</li></ul>" * depth)
            depth = 0

    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("|"):
            if not table:
                close()
            table.append(stripped)
            continue
        if table:
            close()
        if not stripped or (stripped.startswith("<!--") and stripped.endswith("-->")):
            close()
            continue
        if heading := _HEADING.fullmatch(stripped):
            close()
            level = min(6, len(heading.group(1)) + 2)  # below the page's own headings
            out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif item := _ITEM.fullmatch(line):
            close(lists=False)
            want = min(len(item.group(1)) // 2 + 1, 4)
            if want > depth:
                out.append("<ul><li>" * (want - depth))
            else:
                out.append("</li></ul>" * (depth - want) + "</li><li>")
            depth = want
            out.append(inline(item.group(2)))
        elif depth:
            out.append(" " + inline(stripped))  # a list item's continuation line
        else:
            paragraph.append(stripped)
    close()
    return Markup("".join(out))  # noqa: S704 - built only from escaped text and fixed tags
