"""The words of a command line and the checks of each kind of argument.

Words are separated by whitespace. A double-quoted string (``"…"``, with ``\\"`` for a quote
and ``\\\\`` for a backslash) may stand for a word, or for the value after a field's ``=``, so a
value or a pattern can hold spaces; a quote anywhere else is an ordinary character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.config.schema import TARGET_NAME_PATTERN

_SPACE = re.compile(r"\s+")
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_KIND = re.compile(r"[A-Z][A-Za-z0-9]*")
_FIELD = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*")
_TARGET = re.compile(TARGET_NAME_PATTERN)
CLUSTER_SCOPED = "_"
_SHOWN = 60  # characters of an argument a message repeats


@dataclass(frozen=True, slots=True)
class Word:
    raw: str  # as written
    value: str  # with a quoted string unquoted
    quoted: bool


def shown(text: str) -> str:
    """An argument as a message repeats it: quoted, clipped, unprintable characters escaped
    (a message is one line for a person)."""
    clipped = text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
    return "'" + "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in clipped) + "'"


def quoted_words(text: str, *, values: bool) -> tuple[list[Word], str | None]:
    """The words of ``text``, a quoted string standing for a word or (with ``values``) for
    the value after a word's first ``=``; and the word whose quote is not closed, or is glued
    to what follows it, when there is one."""
    words: list[Word] = []
    at, end = 0, len(text)
    while True:
        gap = _SPACE.match(text, at)
        if gap:
            at = gap.end()
        if at >= end:
            return words, None
        start = at
        space = _SPACE.search(text, at)
        stop = space.start() if space else end
        word = text[start:stop]
        quote = 0 if word.startswith('"') or not values else word.find("=") + 1
        if quote and word[quote : quote + 1] != '"':
            quote = 0
        if quote or word.startswith('"'):
            unquoted = _quoted(text, start + quote)
            if unquoted is None:
                return words, word
            value, at = unquoted
            words.append(Word(text[start:at], word[:quote] + value, True))
            continue
        words.append(Word(word, word, False))
        at = stop


def _quoted(text: str, quote: int) -> tuple[str, int] | None:
    """The unquoted string whose opening quote is at ``quote``, and where it ends; None when
    it is not closed, or is followed by anything but whitespace or the end of the line."""
    out: list[str] = []
    at = quote + 1
    while at < len(text):
        ch = text[at]
        if ch == "\\" and text[at + 1 : at + 2] in ('"', "\\"):
            out.append(text[at + 1])
            at += 2
        elif ch == '"':
            at += 1
            if at < len(text) and not text[at].isspace():
                return None
            return "".join(out), at
        else:
            out.append(ch)
            at += 1
    return None


def valid_namespace(text: str) -> bool:
    """A DNS-1123 label, as Kubernetes requires of a namespace."""
    return len(text) <= 63 and _LABEL.fullmatch(text) is not None


def valid_name(text: str) -> bool:
    """A DNS-1123 subdomain: the name rule of most Kubernetes kinds."""
    return len(text) <= 253 and _SUBDOMAIN.fullmatch(text) is not None


def valid_kind(text: str) -> bool:
    """``Kind`` or ``Kind.group``, the group a DNS subdomain (``Deployment.apps``)."""
    kind, _, group = text.partition(".")
    if len(kind) > 63 or _KIND.fullmatch(kind) is None:
        return False
    return (not group and "." not in text) or valid_name(group)


def valid_field(text: str) -> bool:
    """A dotted path of keys: ``spec.approved``, ``metadata.labels.team``."""
    return len(text) <= 253 and _FIELD.fullmatch(text) is not None


def valid_target(text: str) -> bool:
    return _TARGET.fullmatch(text) is not None


def value_problem(text: str, *, lines: bool = False) -> str | None:
    """Why ``text`` may not be written into a file the bot commits, or None: one rule for a
    comment command and the change API. A character Unicode calls "other" or a separator
    (``str.isprintable``: control characters, bidirectional and zero-width controls, which make
    a value read other than it is in review, line separators) is refused; with ``lines``, a
    newline and a tab are allowed (a reason may span lines)."""
    for ch in text:
        if not ch.isprintable() and not (lines and ch in "\n\t"):
            return f"holds the invisible or control character U+{ord(ch):04X}"
    return None


def bad_pattern_character(text: str) -> bool:
    """A control character or line separator, which no ignore-file line can hold."""
    return any(ord(ch) < 0x20 or ch in "\x7f\x85\u2028\u2029" for ch in text)
