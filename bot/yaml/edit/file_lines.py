"""A file being edited, as lines: its BOM, each line's ending and a missing final newline kept.

Edits work on the line contents (what the parsers see, LF only); `rebuilt` puts a new list of
lines back together so that every line difflib finds unchanged keeps its original ending, and
`confined` says whether the lines that did change are the ones an edit may touch.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from bot.errors import IchorError

MAX_EDIT_BYTES: Final = 1 << 20
_BOM: Final = b"\xef\xbb\xbf"
# Line breaks of YAML 1.1 (libyaml) that str.split("\n") does not see: the parsers' line
# numbers would no longer be ours.
_OTHER_BREAKS: Final = ("\x85", "\u2028", "\u2029")


class EditError(IchorError):
    """An edit that cannot be made without touching bytes it does not mean to change."""


@dataclass(frozen=True, slots=True)
class EditText:
    lines: tuple[str, ...]  # contents, without their line endings
    endings: tuple[str, ...]  # "\n" or "\r\n"; "" for the last line when there is no final one
    bom: bool = False
    newline: str = "\n"  # what a new line ends with: the file's usual ending

    @property
    def text(self) -> str:
        """What the parsers read: LF line breaks, no BOM."""
        body = "\n".join(self.lines)
        return body + "\n" if self.endings and self.endings[-1] else body

    @property
    def final_newline(self) -> bool:
        return not self.endings or bool(self.endings[-1])


@dataclass(frozen=True, slots=True)
class Allowed:
    """The old lines [lo, hi) an edit may change; lines may be inserted at lo..hi."""

    lo: int
    hi: int
    insert_only: bool = False


def decode(data: bytes) -> EditText:
    if len(data) > MAX_EDIT_BYTES:
        raise EditError(f"the file is over {MAX_EDIT_BYTES} bytes; it is not edited")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise EditError("the file is UTF-16; only UTF-8 files are edited")
    bom = data.startswith(_BOM)
    try:
        text = data[len(_BOM) if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EditError(f"the file is not valid UTF-8 at byte {exc.start}") from None
    if "\r" in text.replace("\r\n", "") or any(b in text for b in _OTHER_BREAKS):
        raise EditError("the file has line breaks other than LF and CRLF; it is not edited")
    parts = text.split("\n")
    final = parts[-1] == ""
    if final:
        parts.pop()
    lines = tuple(p.removesuffix("\r") for p in parts)
    endings = ["\r\n" if p.endswith("\r") else "\n" for p in parts]
    if endings and not final:
        endings[-1] = ""
    crlf = sum(e == "\r\n" for e in endings)
    newline = "\r\n" if crlf * 2 > len(endings) else "\n"
    return EditText(lines, tuple(endings), bom, newline)


def encode(text: EditText) -> bytes:
    body = "".join(line + end for line, end in zip(text.lines, text.endings, strict=True))
    return (_BOM if text.bom else b"") + body.encode("utf-8")


def split_lines(text: str) -> list[str]:
    """LF-separated text as lines (no empty line after a final newline)."""
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def hunks(old: Sequence[str], new: Sequence[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib's non-equal opcodes between two line lists, as positions in the full lists.

    The common prefix and suffix are trimmed first: an edit is local, so this keeps difflib's
    quadratic worst case to the changed lines.
    """
    start, limit = 0, min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    tail = 0
    while tail < limit - start and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    matcher = difflib.SequenceMatcher(
        None, old[start : len(old) - tail], new[start : len(new) - tail], autojunk=False
    )
    return [
        (tag, i1 + start, i2 + start, j1 + start, j2 + start)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def alignment(old: Sequence[str], new: Sequence[str], allowed: Allowed) -> tuple[int, int] | None:
    """Old lines [a, b) inside ``allowed`` such that every other line is unchanged and in place,
    or None when no such range exists: the edit changed a line it should not have.

    This is exact where a diff is not: when a removed block ends with a line equal to the one
    after it (a ``---``), a diff may report the removal one line late.
    """
    tail = len(old) - allowed.hi
    if len(new) < allowed.lo + tail and not allowed.insert_only:
        return None
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    if allowed.insert_only:
        # new = old[:p] + inserted + old[p:], for some p in [lo, hi]
        first = max(allowed.lo, len(old) - suffix)
        if len(new) < len(old) or first > min(allowed.hi, prefix):
            return None
        return first, first
    if prefix < allowed.lo or suffix < tail:
        return None
    return allowed.lo, allowed.hi


def confined(old: Sequence[str], new: Sequence[str], allowed: Allowed) -> bool:
    """True when every changed line lies where the edit may change lines."""
    return alignment(old, new, allowed) is not None


def rebuilt(text: EditText, new_lines: Sequence[str], allowed: Allowed | None = None) -> EditText:
    """``new_lines`` with the endings of ``text`` kept on every line that did not change.

    Lines outside the aligned range keep their own endings; inside it, difflib says which
    lines are unchanged (they keep theirs) and the rest take the file's usual ending.
    """
    old = text.lines
    span = alignment(old, new_lines, allowed or Allowed(0, len(old)))
    if span is None:
        raise EditError("the edit changed lines outside the entry it changes")
    a, b = span
    middle_end = len(new_lines) - (len(old) - b)
    endings: list[str] = list(text.endings[:a])
    at = a
    for _tag, i1, i2, j1, j2 in hunks(old[a:b], new_lines[a:middle_end]):
        endings.extend(text.endings[at : a + i1])
        endings.extend(text.newline for _ in range(j2 - j1))
        at = a + i2
    endings.extend(text.endings[at:])
    # Only the last line may lack an ending, and only when the file had none at its end.
    endings = [e or text.newline for e in endings]
    if endings and not text.final_newline:
        endings[-1] = ""
    return EditText(tuple(new_lines), tuple(endings), text.bom, text.newline)
