"""Where things are in a file being edited: its documents' lines and the node at a path.

libyaml's composer gives every node its start and end (0-based line, column in characters);
its events say which documents start with a ``---``. A document owns the lines from its own
``---`` up to the next one's (so a ``...`` and the comments after its content go with it);
comments above the first ``---`` belong to the file, not to its first document.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from bot.yaml.edit.file_lines import EditError
from bot.yaml.edit.value_text import Layout

_STR: Final = "tag:yaml.org,2002:str"
_MERGE: Final = "tag:yaml.org,2002:merge"
_LAYOUT_SCAN: Final = 50_000  # nodes looked at to guess the file's indentation


@dataclass(frozen=True, slots=True)
class Doc:
    root: Node
    start: int  # first line it owns: its `---` (0 for a first document without one)
    stop: int  # first line it does not own


@dataclass(frozen=True, slots=True)
class Spot:
    """The node at a path, with its key (in a mapping) and the collection holding it."""

    node: Node
    key: Node | None = None
    parent: Node | None = None

    @property
    def first_line(self) -> int:
        """The first line holding the entry: its key's, else the node's own."""
        return (self.key or self.node).start_mark.line


def read_structure(text: str, line_count: int) -> list[Doc]:
    """The documents of ``text`` with the lines each owns, as libyaml composes them."""
    try:
        roots = list(yaml.compose_all(text, Loader=yaml.CSafeLoader))
        events = [e for e in yaml.parse(text, Loader=yaml.CSafeLoader) if _is_start(e)]
    except yaml.YAMLError as exc:
        raise EditError(f"libyaml cannot read the file: {str(exc).splitlines()[0]}") from None
    starts: list[int] = []
    event: Any
    for event in events:
        if event.version or event.tags:
            raise EditError("the file uses YAML directives (%YAML, %TAG); it is not edited")
        # libyaml reads a document without `---` only at the start of the stream.
        starts.append(event.start_mark.line if event.explicit else 0)
    if len(starts) != len(roots):  # pragma: no cover - one start event per composed document
        raise EditError("the file's documents could not be told apart")
    stops = [*starts[1:], line_count][: len(starts)]
    return [Doc(r, a, b) for r, a, b in zip(roots, starts, stops, strict=True)]


def _is_start(event: object) -> bool:
    return isinstance(event, yaml.DocumentStartEvent)


def dotted(path: Sequence[str]) -> str:
    return ".".join(path) if path else "(the document)"


def is_empty(node: Node) -> bool:
    """A value written as nothing at all (``key:``): it has no text to replace."""
    return (
        isinstance(node, ScalarNode)
        and not node.style
        and node.value == ""
        and node.start_mark.index == node.end_mark.index
    )


def is_flow(node: Node) -> bool:
    return isinstance(node, MappingNode | SequenceNode) and bool(node.flow_style)


def is_block_scalar(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.style in ("|", ">")


def shared_nodes(root: Node) -> set[int]:
    """The ids of nodes reached more than once: an anchor some alias refers to."""
    seen: set[int] = set()
    shared: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            shared.add(id(node))
            continue
        seen.add(id(node))
        stack.extend(_children(node))
    return shared


def _children(node: Node) -> Iterator[Node]:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            yield key
            yield value
    elif isinstance(node, SequenceNode):
        yield from node.value


def locate(root: Node, path: Sequence[str], shared: set[int]) -> Spot | None:
    """The entry at ``path``, or None when some key on it is missing.

    Raises EditError when the path runs through an alias or a merge key: an edit there would
    change every place that shares the node.
    """
    spot = Spot(root)
    for depth, segment in enumerate(path):
        node = spot.node
        if id(node) in shared:
            raise EditError(f"{dotted(path[:depth]) or 'the document'} is shared through an alias")
        if isinstance(node, MappingNode):
            pair = next((p for p in node.value if _names(p[0], segment)), None)
            if pair is None:
                if any(k.tag == _MERGE for k, _ in node.value):
                    message = f"{dotted(path[: depth + 1])} may come from a merge key (an alias)"
                    raise EditError(message)
                return None
            spot = Spot(pair[1], pair[0], node)
        elif isinstance(node, SequenceNode) and segment.isdecimal():
            index = int(segment)
            if index >= len(node.value):
                return None
            spot = Spot(node.value[index], None, node)
        else:
            return None
    if id(spot.node) in shared:
        raise EditError(f"{dotted(path)} is shared through an alias")
    return spot


def _names(key: Node, segment: str) -> bool:
    return isinstance(key, ScalarNode) and key.tag == _STR and key.value == segment


def has_merge_key(node: Node) -> bool:
    return isinstance(node, MappingNode) and any(k.tag == _MERGE for k, _ in node.value)


def content_end(node: Node, lines: Sequence[str]) -> tuple[int, int]:
    """Where the text of ``node`` ends (line, column), trailing comments and blanks left out."""
    while True:
        if isinstance(node, ScalarNode):
            if is_block_scalar(node):
                return _block_scalar_end(node, lines)
            return node.end_mark.line, node.end_mark.column
        if is_flow(node) or not node.value:
            return node.end_mark.line, node.end_mark.column
        last = node.value[-1]
        if isinstance(node, MappingNode):
            key, value = last
            if is_empty(value):
                return key.end_mark.line, colon_after(key, lines) + 1
            last = value
        node = last


def _block_scalar_end(node: Node, lines: Sequence[str]) -> tuple[int, int]:
    # The scanner's end is past the breaks (and the next line's indentation) that follow.
    end = node.end_mark
    line = (
        end.line
        if end.line < len(lines) and lines[end.line][: end.column].strip()
        else end.line - 1
    )
    while line > node.start_mark.line and not lines[line].strip():
        line -= 1
    return line, len(lines[line])


def colon_after(key: Node, lines: Sequence[str]) -> int:
    """The column of the ``:`` that ends a simple key."""
    line = lines[key.end_mark.line]
    column = key.end_mark.column
    while column < len(line) and line[column] == " ":
        column += 1
    if column >= len(line) or line[column] != ":":
        raise EditError(f"the key on line {key.end_mark.line + 1} is not a simple `key:`")
    return column


def gap_end(lines: Sequence[str], line: int) -> int:
    """The first line from ``line`` that is not blank or a comment."""
    while line < len(lines) and (not lines[line].strip() or lines[line].lstrip().startswith("#")):
        line += 1
    return line


def layout_of(roots: Sequence[Node]) -> Layout:
    """The indentation the file already uses for nested mappings and for block sequences."""
    mapping: int | None = None
    offset: int | None = None
    stack = list(reversed(roots))
    seen: set[int] = set()
    while stack and len(seen) < _LAYOUT_SCAN and (mapping is None or offset is None):
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode) and not node.flow_style:
            for key, value in node.value:
                if is_flow(value) or not isinstance(value, MappingNode | SequenceNode):
                    continue
                step = _first_column(value) - key.start_mark.column
                if isinstance(value, MappingNode) and mapping is None and step > 0:
                    mapping = step
                if isinstance(value, SequenceNode) and offset is None and step >= 0:
                    offset = step
        stack.extend(reversed(list(_children(node))))
    default = Layout()
    return Layout(
        default.mapping if mapping is None else mapping,
        default.offset if offset is None else offset,
    )


def _first_column(node: MappingNode | SequenceNode) -> int:
    if isinstance(node, MappingNode) and node.value:
        return int(node.value[0][0].start_mark.column)
    return int(node.start_mark.column)


def line_indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))
