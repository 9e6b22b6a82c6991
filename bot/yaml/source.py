"""One file's bytes while it is read: line lookups, limits, and what a reading produced."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final

from bot.yaml.parsed import LinePath, YamlDocument

MAX_EXPANDED_NODES: Final = 1_000_000


@dataclass(slots=True)
class Outcome:
    error: str | None = None
    error_line: int | None = None  # 1-based
    final: bool = True  # bad input or a limit of ours: a YAML 1.2 re-read cannot change it
    documents: list[YamlDocument] = field(default_factory=list)
    resume: int = 0  # 0-based line where the document after the last good one may start
    redefined_anchor: bool = False

    def add(self, node: Any, src: Source, value: object) -> None:
        start = start_line(node, src)
        if src.lines_under is None:
            self.documents.append(YamlDocument(len(self.documents), start, value))
        else:
            lines = part_lines(node, src.lines_under)
            self.documents.append(YamlDocument(len(self.documents), start, value, lines=lines))
        self.resume = node.end_mark.line + (1 if node.end_mark.column else 0)


class Refused(Exception):
    """A limit of this module (not a YAML rule) was hit; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


# A plain `<<` standing alone as a token (a heredoc's `<<EOF` does not).
_MERGE_KEY = re.compile(rb"(?<![^\s\[\]{},?:-])<<(?![^\s\[\]{},:])")
# A tag is a run of non-blanks from its `!` (the run may go further: only a superset matters).
_TAG_RUN = re.compile(rb"![^\s]*")
_DIRECTIVE = re.compile(rb"^%TAG", re.MULTILINE)


def may_merge(data: bytes) -> bool:
    """Whether ``data`` may hold a merge key, which copies pairs while the value is built, so
    the file is measured first: a plain ``<<`` token, or a tag naming
    ``tag:yaml.org,2002:merge``. Without a ``%TAG`` directive such a tag is ``!!merge`` or
    ``!<tag:yaml.org,2002:merge>``, perhaps %-escaped (``!!m%65rge``); ``!merge`` is a local
    tag of its own. Linear: the runs do not overlap. A check that took any ``<<`` (a script's
    heredoc) or any ``!`` and "merge" (``!include_dir_merge_named``) measured files for nothing.
    """
    if b"<<" in data and _MERGE_KEY.search(data):
        return True
    if b"!" not in data:
        return False
    if b"%" in data and _DIRECTIVE.search(data):
        return True
    return any(
        b"%" in run or (b"merge" in run and (b"!!" in run or b"!<" in run))
        for run in _TAG_RUN.findall(data)
    )


class Source:
    """The input, what it may need, and line lookups (split only when needed)."""

    def __init__(self, data: bytes, lines_under: frozenset[str] | None = None) -> None:
        self.data = data
        self.lines_under = lines_under
        self.merges = may_merge(data)
        self.budget = max(MAX_EXPANDED_NODES, len(data))  # own nodes never outnumber the bytes

    @cached_property
    def lines(self) -> list[bytes]:
        lines = self.data.split(b"\n")
        return lines[:-1] if len(lines) > 1 and not lines[-1] else lines  # none after the last \n

    @cached_property
    def text(self) -> str:
        return self.data.decode("utf-8")

    def clamp(self, line: int | None) -> int | None:
        # A mark at the end of input sits on the line after the final newline: no editor has it.
        return None if line is None else max(1, min(line, len(self.lines)))

    def next_content(self, first: int, stop: int | None) -> int:
        """The first line (1-based) from ``first`` (0-based) holding content, at most ``stop``."""
        last = len(self.lines) if stop is None else stop
        for number in range(first + 1, last):
            text = unmarked(self.lines[number - 1])
            if text and not text.startswith((b"#", b"%")):
                return number
        return max(1, last)

    def empty_document(self, line: int, column: int) -> int:
        """An empty document's line is its ``---``; the parser marks the token after it."""
        for index in range(min(line if column else line - 1, len(self.lines) - 1), -1, -1):
            text = self.lines[index].strip()
            if text.startswith(b"---") and unmarked(text) != text:
                return index + 1
            if text and not text.startswith(b"#"):
                break
        return self.clamp(line + 1) or 1


def unmarked(line: bytes) -> bytes:
    """A line without its ``---`` or ``...`` document marker."""
    text = line.strip()
    marked = text[:3] in (b"---", b"...") and (len(text) == 3 or text[3:4].isspace())
    return text[3:].strip() if marked else text


def start_line(node: Any, src: Source) -> int:
    mark = node.start_mark
    if node.id == "scalar" and not node.value and mark.index == node.end_mark.index:
        return src.empty_document(mark.line, mark.column)
    return int(mark.line) + 1


def part_lines(node: Any, under: frozenset[str]) -> dict[LinePath, int]:
    """Where a mapping document's top-level keys start, and the keys or items of the values
    under ``under``: two levels of one node graph already built, so a caller can name the line
    of a field without reading the file again."""
    found: dict[LinePath, int] = {}
    if node.id != "mapping":
        return found
    for key, value in node.value:
        if key.id != "scalar" or not key.value:
            continue
        name = key.value
        found[(name,)] = key.start_mark.line + 1
        if name not in under:
            continue
        if value.id == "mapping":
            for child, _ in value.value:
                if child.id == "scalar":
                    found.setdefault((name, child.value), child.start_mark.line + 1)
        elif value.id == "sequence":
            for index, item in enumerate(value.value):
                found[(name, index)] = item.start_mark.line + 1
    return found
