"""The digest of a YAML document: SHA-256 hex of its canonical JSON (design.md 5.1 fingerprints).

Canonical JSON is ``json.dumps(value, sort_keys=True, separators=(",", ":"),
ensure_ascii=False)`` of the parsed document, encoded as UTF-8. What the parser gives is plain
data (:mod:`bot.yaml.documents`), and the rules for what JSON has no word for are:

- timestamps, ``!!binary`` and values under unknown tags are the text as written (the parser
  keeps them as strings), so ``2001-12-14`` and ``"2001-12-14"`` have one digest;
- NaN and the infinities are Python's ``NaN``, ``Infinity`` and ``-Infinity`` tokens;
- a mapping key that is not a string is written as its JSON text (``1`` -> ``"1"``, ``true``
  -> ``"true"``, ``null`` -> ``"null"``), as Kubernetes' YAML-to-JSON conversion does. Keys of
  one type sort as ``json`` sorts them; a mapping whose keys cannot be compared (a string and
  a number) sorts them by that text, strings first among equals;
- a lone surrogate (a ``"\\ud800"`` escape) is encoded with ``surrogatepass``.

The fast path is the C encoder; what it refuses (keys of mixed types, nesting deeper than the
interpreter's recursion allows) goes through an equivalent encoder without recursion, which
writes the same text wherever both can.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

_DUMPS = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
_SCALAR = json.JSONEncoder(ensure_ascii=False).encode


def document_digest(value: object) -> str:
    """SHA-256 hex of the canonical JSON of one parsed document (see the module docstring)."""
    return hashlib.sha256(canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()


def canonical_json(value: object) -> str:
    try:
        return _DUMPS(value)
    except (TypeError, ValueError, RecursionError):
        return "".join(_pieces(value))


def _key_text(key: object) -> str:
    return key if isinstance(key, str) else _SCALAR(key)


def _sorted_items(mapping: dict[object, object]) -> list[tuple[object, object]]:
    try:
        return sorted(mapping.items(), key=lambda item: item[0])  # type: ignore[arg-type,return-value]
    except TypeError:  # keys of mixed types: by their JSON text, strings first
        return sorted(
            mapping.items(), key=lambda item: (_key_text(item[0]), not isinstance(item[0], str))
        )


def _pieces(root: object) -> Iterator[str]:
    """The canonical JSON of ``root`` in pieces, walking an explicit stack (no recursion)."""
    stack: list[object] = [root]
    while stack:
        value = stack.pop()
        if isinstance(value, _Text):
            yield value.text
        elif isinstance(value, dict):
            items = _sorted_items(value)
            parts: list[object] = [_Text("{")]
            for n, (key, item) in enumerate(items):
                prefix = "," if n else ""
                parts += [_Text(prefix + _SCALAR(_key_text(key)) + ":"), item]
            parts.append(_Text("}"))
            stack.extend(reversed(parts))
        elif isinstance(value, list | tuple):
            parts = [_Text("[")]
            for n, item in enumerate(value):
                if n:
                    parts.append(_Text(","))
                parts.append(item)
            parts.append(_Text("]"))
            stack.extend(reversed(parts))
        else:
            yield _scalar(value)


def _scalar(value: object) -> str:
    try:
        return _SCALAR(value)
    except (TypeError, ValueError):  # not plain data: never from the parser, but never a crash
        return _SCALAR(repr(value))


class _Text:
    """Already-encoded JSON punctuation on the stack, told apart from the values."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text
