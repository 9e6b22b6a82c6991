"""Targeted line edits: the fallback when ruamel.yaml's round trip changes more than it should.

Each edit rewrites only the lines that hold the entry it changes, from the positions libyaml
gives the nodes, and keeps the file's own indentation for what it writes. `allowed_*` says which
old lines an edit may touch; the caller holds every candidate result to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from bot.yaml.edit.file_lines import Allowed, EditError
from bot.yaml.edit.positions import (
    Spot,
    colon_after,
    content_end,
    gap_end,
    is_block_scalar,
    is_empty,
    is_flow,
)
from bot.yaml.edit.value_text import Layout, block_lines, flow_text, inline_text, scalar_text

_NULL = "tag:yaml.org,2002:null"


def end_line(spot: Spot, lines: Sequence[str]) -> int:
    """The last line holding the entry's text (its key's, for a value written as nothing)."""
    if is_empty(spot.node):
        return (spot.key or spot.node).end_mark.line
    return content_end(spot.node, lines)[0]


def allowed_set(spot: Spot, lines: Sequence[str]) -> Allowed:
    return Allowed(spot.first_line, end_line(spot, lines) + 1)


def allowed_add(parent: Spot, lines: Sequence[str]) -> Allowed:
    node = parent.node
    if isinstance(node, MappingNode) and node.value and not node.flow_style:
        # New lines go after the mapping's last entry, before whatever follows it.
        after = content_end(node, lines)[0] + 1
        return Allowed(after, gap_end(lines, after), insert_only=True)
    return allowed_set(parent, lines)


def allowed_delete(spot: Spot, lines: Sequence[str]) -> Allowed:
    following = _next_key(spot)
    if following is not None and _shares_line(spot, lines):
        return Allowed(spot.first_line, following.start_mark.line + 1)
    return Allowed(spot.first_line, end_line(spot, lines) + 1)


def quote_style(node: Node) -> str:
    """How the old value quotes its strings: its own style, or the one all its items share."""
    if isinstance(node, ScalarNode):
        return node.style if node.style in ("'", '"') else ""
    items = [v for _, v in node.value] if isinstance(node, MappingNode) else list(node.value)
    styles = {v.style or "" for v in items if isinstance(v, ScalarNode)}
    return styles.pop() if len(styles) == 1 and len(items) > 0 else ""


def is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _NULL


# ---- set -----------------------------------------------------------------------------------


def set_lines(lines: Sequence[str], spot: Spot, value: object, layout: Layout) -> list[str]:
    node = spot.node
    # Strings keep the quoting of what they replace: a scalar's, or the old collection's items'.
    collection = isinstance(value, Mapping | list)
    style = quote_style(node) if collection != isinstance(node, ScalarNode) else ""
    in_flow = spot.parent is not None and is_flow(spot.parent)
    keep_flow = is_flow(node) and collection
    inline = inline_text(value, flow=in_flow or keep_flow, style=style)
    if inline is not None:
        return _set_inline(lines, spot, inline)
    return _set_block(lines, spot, value, layout, style)


def _set_inline(lines: Sequence[str], spot: Spot, text: str) -> list[str]:
    node, key = spot.node, spot.key
    last = end_line(spot, lines)
    if is_empty(node):
        if key is None:
            raise EditError(f"the empty entry on line {node.start_mark.line + 1} has no key")
        row = key.end_mark.line
        return _splice(lines, row, row, [_after_colon(lines, key, text)])
    start = node.start_mark
    if isinstance(node, ScalarNode) or is_flow(node):
        if is_block_scalar(node):
            new = lines[start.line][: start.column] + text  # a comment after `|` goes with it
        else:
            end = node.end_mark
            new = lines[start.line][: start.column] + text + lines[end.line][end.column :]
        return _splice(lines, start.line, last, [new])
    if key is None:  # a block collection as a sequence item or the document: `- ` stays
        return _splice(lines, start.line, last, [lines[start.line][: start.column] + text])
    row = key.end_mark.line
    colon = colon_after(key, lines)
    head = lines[row][: colon + 1] + " " + text + _comment(lines[row][colon + 1 :])
    return [*lines[:row], head, *lines[row + 1 : start.line], *lines[last + 1 :]]


def _after_colon(lines: Sequence[str], key: Node, text: str) -> str:
    line = lines[key.end_mark.line]
    colon = colon_after(key, lines)
    head, rest = line[: colon + 1], line[colon + 1 :]
    if not rest.strip():
        return f"{head} {text}"
    if rest.lstrip().startswith("#"):
        return f"{head} {text}{rest}"
    if rest.lstrip()[:1] in (",", "}", "]"):
        return f"{head} {text}{rest.lstrip()}"
    raise EditError(f"line {key.end_mark.line + 1} holds more than the key it should change")


def _set_block(
    lines: Sequence[str], spot: Spot, value: object, layout: Layout, style: str
) -> list[str]:
    node, key = spot.node, spot.key
    last = end_line(spot, lines)
    start = node.start_mark
    is_list = isinstance(value, list)
    if key is None:  # a sequence item or the whole document: written where the old one starts
        block = block_lines(value, start.column, layout, style)
        block[0] = lines[start.line][: start.column] + block[0][start.column :]
        return _splice(lines, start.line, last, block)
    if isinstance(node, MappingNode | SequenceNode) and not is_flow(node):
        same_kind = isinstance(node, SequenceNode) == is_list
        step = layout.offset if is_list else layout.mapping
        column = _first_column(node) if same_kind else key.start_mark.column + step
        return _splice(lines, start.line, last, block_lines(value, column, layout, style))
    row = key.end_mark.line
    colon = colon_after(key, lines)
    if is_empty(node):
        tail = lines[row][colon + 1 :]
    elif is_block_scalar(node):
        tail = ""
    else:
        tail = lines[node.end_mark.line][node.end_mark.column :]
    head = lines[row][: colon + 1] + _comment(tail)
    step = layout.offset if is_list else layout.mapping
    block = block_lines(value, key.start_mark.column + step, layout, style)
    return _splice(lines, row, last, [head, *block])


def _first_column(node: MappingNode | SequenceNode) -> int:
    if isinstance(node, MappingNode):
        return int(node.value[0][0].start_mark.column)
    return int(node.start_mark.column)


def _comment(tail: str) -> str:
    """What follows a replaced value on its line, when it is a comment (kept as written)."""
    return tail if tail.lstrip().startswith("#") else ""


def _splice(lines: Sequence[str], first: int, last: int, new: Sequence[str]) -> list[str]:
    return [*lines[:first], *new, *lines[last + 1 :]]


# ---- add -----------------------------------------------------------------------------------


def add_lines(
    lines: Sequence[str], parent: Spot, key: str, value: object, layout: Layout
) -> list[str]:
    node = parent.node
    if isinstance(node, MappingNode) and node.value and not node.flow_style:
        column = node.value[0][0].start_mark.column
        after = content_end(node, lines)[0] + 1
        return [*lines[:after], *block_lines({key: value}, column, layout), *lines[after:]]
    if isinstance(node, MappingNode):
        pair = f"{scalar_text(key, flow=True, key=True)}: {flow_text(value)}"
        if not node.value:
            start, end = node.start_mark, node.end_mark
            new = (
                lines[start.line][: start.column] + "{" + pair + "}" + lines[end.line][end.column :]
            )
            return _splice(lines, start.line, end.line, [new])
        last_key, last_value = node.value[-1]
        if is_empty(last_value):
            row, column = last_key.end_mark.line, colon_after(last_key, lines) + 1
        else:
            row, column = last_value.end_mark.line, last_value.end_mark.column
        new = lines[row][:column] + ", " + pair + lines[row][column:]
        return _splice(lines, row, row, [new])
    if is_null(node):
        return set_lines(lines, parent, {key: value}, layout)
    raise EditError("the parent is not a mapping")


# ---- delete --------------------------------------------------------------------------------


def delete_lines(lines: Sequence[str], spot: Spot) -> list[str]:
    parent, key = spot.parent, spot.key
    if key is None or not isinstance(parent, MappingNode) or parent.flow_style:
        raise EditError("only an entry of a block mapping can be removed line by line")
    first, last = key.start_mark.line, end_line(spot, lines)
    if not _shares_line(spot, lines):
        return [*lines[:first], *lines[last + 1 :]]
    # The first key of a `- ` item: the next key moves up onto the item's line.
    following = _next_key(spot)
    if following is None:
        raise EditError(f"line {first + 1} holds the only key of a sequence item")
    moved = (
        lines[first][: key.start_mark.column]
        + lines[following.start_mark.line][following.start_mark.column :]
    )
    return [*lines[:first], moved, *lines[following.start_mark.line + 1 :]]


def _shares_line(spot: Spot, lines: Sequence[str]) -> bool:
    key = spot.key
    return key is not None and bool(lines[key.start_mark.line][: key.start_mark.column].strip())


def _next_key(spot: Spot) -> Node | None:
    parent = spot.parent
    if not isinstance(parent, MappingNode):
        return None
    keys = [k for k, _ in parent.value]
    index = next(i for i, k in enumerate(keys) if k is spot.key)
    return keys[index + 1] if index + 1 < len(keys) else None
