"""New values as YAML text that YAML 1.1 (libyaml) and YAML 1.2 (ruamel.yaml) read alike.

A string is written plain only when both parsers read that text back as the same string, so
``"yes"``, ``"1"``, ``"null"``, ``":"`` or ``"2024-01-01"`` come out quoted; every scalar is
checked this way, in the context (block, flow, key) it is written in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import yaml
from ruamel.yaml import YAML

from bot.yaml.edit.file_lines import EditError

MAX_VALUE_DEPTH: Final = 64
MAX_VALUE_ITEMS: Final = 100_000
_MAX_KEY_CHARS: Final = 1000  # an implicit key is at most 1024 characters, on one line
# Plain text never starts with an indicator; y and n are booleans to Go's YAML 1.1 (kubectl).
_NOT_PLAIN_START: Final = frozenset("?:,[]{}#&*!|>'\"%@`")
_GO_BOOLEANS: Final = frozenset({"y", "Y", "n", "N"})


@dataclass(frozen=True, slots=True)
class Layout:
    mapping: int = 2  # a nested mapping's keys, right of its parent key
    offset: int = 2  # a block sequence's `-`, right of its parent key (0: indentless)


def plain_value(value: object) -> object:
    """A copy of ``value`` as the parsers would read it (lists, dicts), refusing anything that is
    not plain data: str, int, bool, None, a finite float, a list or tuple, a str-keyed mapping."""
    items = 0

    def copy(item: object, depth: int) -> object:
        nonlocal items
        items += 1
        if depth > MAX_VALUE_DEPTH or items > MAX_VALUE_ITEMS:
            raise EditError("the value is too large or too deeply nested to write")
        if item is None or isinstance(item, str | bool | int):
            return item
        if isinstance(item, float):
            if not math.isfinite(item):
                raise EditError(f"the value {item!r} is not a finite number")
            return item
        if isinstance(item, Mapping):
            out: dict[str, object] = {}
            for key, child in item.items():
                if not isinstance(key, str):
                    raise EditError(f"a mapping key must be a string, not {key!r}")
                out[key] = copy(child, depth + 1)
            return out
        if isinstance(item, list | tuple):
            return [copy(child, depth + 1) for child in item]
        raise EditError(f"the value {item!r} is not plain data (str, int, bool, list, mapping)")

    return copy(value, 0)


def scalar_text(value: object, *, flow: bool = False, key: bool = False, style: str = "") -> str:
    """One scalar as YAML text; ``style`` ("'" or '"') is the quoting the old value had."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        text = _float_text(value)
    elif isinstance(value, str):
        text = _string_text(value, flow=flow, key=key, style=style)
    else:  # pragma: no cover - check_value refused it
        raise EditError(f"the value {value!r} is not a scalar")
    if key and (len(text) > _MAX_KEY_CHARS or "\n" in text):
        raise EditError("a mapping key this long cannot be written")
    if not _reads_as(text, value, flow=flow, key=key):
        raise EditError(f"the value {value!r} cannot be written so that every parser reads it")
    return text


def _float_text(value: float) -> str:
    text = repr(value)
    mantissa, e, exponent = text.partition("e")
    # YAML 1.1 wants a dot in a float (1e-05 would be a string there) and a signed exponent.
    if e and "." not in mantissa:
        mantissa += ".0"
    if e and exponent[:1] not in "+-":
        exponent = "+" + exponent
    return mantissa + e + exponent


def _string_text(value: str, *, flow: bool, key: bool, style: str) -> str:
    if style == "'" and value.isprintable():
        return "'" + value.replace("'", "''") + "'"
    plain = value and value.strip() == value and value.isprintable() and style != '"'
    if plain and value[0] not in _NOT_PLAIN_START and value not in _GO_BOOLEANS:
        return value if _reads_as(value, value, flow=flow, key=key) else double_quoted(value)
    return double_quoted(value)


def double_quoted(value: str) -> str:
    out = ['"']
    for char in value:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif 0x20 <= code < 0x7F or (code >= 0xA0 and char.isprintable() and code != 0xFEFF):
            out.append(char)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def _reads_as(text: str, value: object, *, flow: bool, key: bool) -> bool:
    if key:
        expected: list[object] = [{value: 0}]
    elif flow:
        expected = [[value, 0], {"k": value, "j": 0}]
    else:
        expected = [{"k": value}]
    readings = _readings(text, flow, key)  # two readers per source
    return all(same(r, expected[i // 2]) for i, r in enumerate(readings))


@lru_cache(maxsize=8192)
def _readings(text: str, flow: bool, key: bool) -> tuple[object, ...]:
    """How libyaml and ruamel.yaml read ``text`` in its context (cached: keys repeat)."""
    if key:
        sources = [f"{text}: 0\n"]
    elif flow:
        sources = [f"[{text}, 0]\n", f"{{k: {text}, j: 0}}\n"]
    else:
        sources = [f"k: {text}\n"]
    out: list[object] = []
    for source in sources:
        for read in (_libyaml, _ruamel):
            try:
                out.append(read(source))
            except Exception:  # any complaint means "not this text"
                out.append(_Unreadable)
    return tuple(out)


class _Unreadable:
    pass


def _libyaml(source: str) -> object:
    return yaml.load(source, Loader=yaml.CSafeLoader)


def _ruamel(source: str) -> object:
    return YAML(typ="safe", pure=True).load(source)


def same(a: object, b: object) -> bool:
    """Equal as plain data, types included (True is not 1, 1 is not 1.0); linear with aliases."""
    stack = [(a, b)]
    seen: set[tuple[int, int]] = set()
    while stack:
        x, y = stack.pop()
        if isinstance(x, dict) and isinstance(y, dict):
            if (id(x), id(y)) not in seen:
                seen.add((id(x), id(y)))
                if x.keys() != y.keys():
                    return False
                stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list) and isinstance(y, list):
            if (id(x), id(y)) not in seen:
                seen.add((id(x), id(y)))
                if len(x) != len(y):
                    return False
                stack.extend(zip(x, y, strict=True))
        elif type(x) is not type(y):
            return False
        elif isinstance(x, float) and math.isnan(x):
            if not math.isnan(y):  # type: ignore[arg-type]
                return False
        elif x != y:
            return False
    return True


# ---- collections ---------------------------------------------------------------------------


def inline_text(value: object, *, flow: bool = False, style: str = "") -> str | None:
    """The value on one line (a scalar, ``[]``, ``{}``; anything in flow context), else None.

    ``style`` is the quoting of the old value, or of the old collection's strings.
    """
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        if not flow:
            return None
        pairs = (
            f"{scalar_text(k, flow=True, key=True)}: {flow_text(v, style)}"
            for k, v in value.items()
        )
        return "{" + ", ".join(pairs) + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        return "[" + ", ".join(flow_text(v, style) for v in value) + "]" if flow else None
    return scalar_text(value, flow=flow, style=style)


def flow_text(value: object, style: str = "") -> str:
    text = inline_text(value, flow=True, style=style)
    assert text is not None
    return text


def block_lines(value: object, indent: int, layout: Layout, style: str = "") -> list[str]:
    """A non-empty mapping or list as block lines starting at column ``indent``; ``style`` is
    the quoting of the strings it replaces, kept for its own strings."""
    pad = " " * indent
    out: list[str] = []
    if isinstance(value, Mapping):
        for k, v in value.items():
            head = f"{pad}{scalar_text(k, key=True)}:"
            inline = inline_text(v, style=style if not isinstance(v, Mapping | list) else "")
            if inline is not None:
                out.append(f"{head} {inline}")
                continue
            out.append(head)
            step = layout.offset if isinstance(v, list | tuple) else layout.mapping
            out.extend(block_lines(v, indent + step, layout))
        return out
    assert isinstance(value, Sequence)
    for item in value:
        inline = inline_text(item, style=style if not isinstance(item, Mapping | list) else "")
        if inline is not None:
            out.append(f"{pad}- {inline}")
            continue
        inner = block_lines(item, indent + 2, layout)
        inner[0] = f"{pad}- {inner[0][indent + 2 :]}"
        out.extend(inner)
    return out
