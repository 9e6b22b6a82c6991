"""Plain words and line numbers for ``.ichor.yaml`` problems (pure).

The validation library's messages ("Input should be a valid string") are replaced by what a
person needs: what the value must be, the line it is on, and the key they probably meant.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

# Validation error types, and what the value must be instead.
_MUST_BE = {
    "string_type": "must be text",
    "int_type": "must be a whole number",
    "bool_type": "must be true or false",
    "list_type": "must be a list",
    "dict_type": "must be a mapping (key: value)",
    "model_type": "must be a mapping (key: value)",
    "model_attributes_type": "must be a mapping (key: value)",
    "string_too_short": "must not be empty",
}


def plain_message(error_type: str, message: str, context: Mapping[str, Any] | None) -> str:
    """What the value must be, in plain words; the library's text only when nothing better."""
    if error_type in _MUST_BE:
        return _MUST_BE[error_type]
    context = context or {}
    if error_type == "literal_error" and "expected" in context:
        return f"must be {context['expected']}"
    if error_type == "too_short" and "min_length" in context:
        count = context["min_length"]
        return f"must have at least {count} entr{'y' if count == 1 else 'ies'}"
    text = message.removeprefix("Value error, ")
    return text.replace("Input should be", "must be").replace("input should be", "must be")


def did_you_mean(key: object, allowed: Sequence[str]) -> str:
    """`` (did you mean 'targets'?)`` for a near miss, else ``""``; linear in ``allowed``."""
    if not isinstance(key, str) or len(key) > 100:
        return ""
    folded = {name.lower(): name for name in allowed}
    if key.lower() in folded:
        return f"; did you mean '{folded[key.lower()]}'?"
    close = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def line_of(root: yaml.Node | None, loc: Sequence[int | str]) -> int | None:
    """The 1-based line of the value at ``loc`` (a key's own line for its last segment), or of
    the nearest enclosing node that exists (a missing key: its mapping)."""
    node = root
    line = None if root is None else root.start_mark.line + 1
    for part in loc:
        child = _child(node, part)
        if child is None:
            break
        node, line = child[1], child[0]
    return line


def _child(node: yaml.Node | None, part: int | str) -> tuple[int, yaml.Node] | None:
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == part:
                return key.start_mark.line + 1, value
    if (
        isinstance(node, yaml.SequenceNode)
        and isinstance(part, int)
        and 0 <= part < len(node.value)
    ):
        item = node.value[part]
        return item.start_mark.line + 1, item
    return None
