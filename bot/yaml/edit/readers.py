"""How the edited file reads to each parser the gate and its peers use, so an edit is held to
what it meant: the gate's own reader, PyYAML's safe loader and ruamel.yaml's safe loader."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import yaml
from ruamel.yaml import YAML

from bot.yaml.documents import parse_yaml
from bot.yaml.edit.file_lines import EditText, hunks
from bot.yaml.edit.value_text import same

Reader = Callable[[str], list[object] | None]


def read_gate(text: str) -> list[object] | None:
    result = parse_yaml(text.encode("utf-8"))
    if result.error is not None:
        return None
    return [d.value for d in result.documents]


def read_libyaml(text: str) -> list[object] | None:
    try:
        return list(yaml.load_all(text, Loader=yaml.CSafeLoader))
    except Exception:  # it cannot read this file: nothing to hold the edit to
        return None


def read_ruamel(text: str) -> list[object] | None:
    try:
        return list(YAML(typ="safe", pure=True).load_all(text))
    except Exception:  # as above
        return None


READERS: Final[dict[str, Reader]] = {
    "gate": read_gate,
    "PyYAML safe_load_all": read_libyaml,
    "ruamel.yaml safe": read_ruamel,
}


def changed_size(old: Sequence[str], new: Sequence[str]) -> int:
    """About how many characters an edit changes: per hunk, what its common prefix and suffix
    leave (a re-spaced comment counts, an untouched key does not)."""
    size = 0
    for _, i1, i2, j1, j2 in hunks(old, new):
        before, after = "\n".join(old[i1:i2]), "\n".join(new[j1:j2])
        limit = min(len(before), len(after))
        head = 0
        while head < limit and before[head] == after[head]:
            head += 1
        tail = 0
        while tail < limit - head and before[-1 - tail] == after[-1 - tail]:
            tail += 1
        size += len(before) + len(after) - 2 * (head + tail)
    return size


def read_gate_matches(text: EditText, expected: list[object]) -> bool:
    values = read_gate(text.text)
    return values is not None and same(values, expected)
