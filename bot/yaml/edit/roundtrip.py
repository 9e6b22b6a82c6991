"""The first try of every edit: ruamel.yaml's round trip over the one document it changes.

Only the document's own lines (from its first content line to its last) are loaded and dumped,
so the markers, the comments around it and the other documents never pass through ruamel.yaml.
Its output is a candidate: the caller keeps it only when the lines it changed are the edit's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString
from yaml.nodes import MappingNode, Node, SequenceNode

from bot.yaml.edit.file_lines import split_lines
from bot.yaml.edit.positions import content_end
from bot.yaml.edit.value_text import Layout, scalar_text

_WIDTH = 1 << 20  # never fold a long scalar onto a second line


class _Sink:
    """A write-only stream for ruamel.yaml's dump (no I/O module in a pure core)."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)


def roundtrip(
    lines: Sequence[str], root: Node, kind: str, path: Sequence[str], value: object, layout: Layout
) -> list[str] | None:
    """The file's lines with the edit made by ruamel.yaml, or None when it cannot make it."""
    if not path or not isinstance(root, MappingNode | SequenceNode) or root.flow_style:
        return None
    if root.start_mark.column != 0:  # a root on the `---` line: ruamel would move it
        return None
    first, last = root.start_mark.line, content_end(root, lines)[0]
    yaml = YAML(typ="rt", pure=True)
    yaml.preserve_quotes = True
    yaml.width = _WIDTH
    yaml.encoding = None  # type: ignore[assignment]  # str parts, not bytes
    yaml.indent(mapping=layout.mapping, sequence=layout.offset + 2, offset=layout.offset)
    sink = _Sink()
    try:
        data = yaml.load("\n".join(lines[first : last + 1]) + "\n")
        _change(data, kind, path, value)
        yaml.dump(data, sink)
    except Exception:  # whatever ruamel.yaml cannot do, the line edit may
        return None
    return [*lines[:first], *split_lines("".join(sink.parts)), *lines[last + 1 :]]


def _change(data: Any, kind: str, path: Sequence[str], value: object) -> None:
    parents = [data]
    for segment in path[:-1]:
        parents.append(_child(parents[-1], segment))
    parent, last = parents[-1], path[-1]
    if kind == "delete":
        del parent[last]
    elif kind == "add" and parent is None:  # `key:` with nothing: it becomes a mapping
        grand = parents[-2]
        grand[_index(grand, path[-2])] = CommentedMap([(last, _value(value, None))])
    elif kind == "add":
        if not isinstance(parent, CommentedMap) or last in parent:
            raise KeyError(last)
        parent[last] = _value(value, None)
    else:
        index = _index(parent, last)
        parent[index] = _value(value, parent[index])


def _child(node: Any, segment: str) -> Any:
    return node[_index(node, segment)]


def _index(node: Any, segment: str) -> Any:
    if isinstance(node, CommentedSeq):
        return int(segment)
    if not isinstance(node, CommentedMap) or segment not in node:
        raise KeyError(segment)
    return segment


def _value(value: object, old: object) -> object:
    """The new value as ruamel.yaml types: quoted where our rendering quotes it (in the old
    value's style), and in flow style where the old collection was."""
    if isinstance(value, str):
        style = "'" if isinstance(old, SingleQuotedScalarString) else ""
        style = '"' if isinstance(old, DoubleQuotedScalarString) else style
        text = scalar_text(value, style=style)
        if text.startswith("'"):
            return SingleQuotedScalarString(value)
        return DoubleQuotedScalarString(value) if text.startswith('"') else value
    flow = isinstance(old, CommentedMap | CommentedSeq) and old.fa.flow_style()
    # New strings in a collection are quoted as the old one's strings were.
    items = list(old.values()) if isinstance(old, CommentedMap) else old
    sample = (
        next((i for i in items if isinstance(i, str)), None) if isinstance(items, list) else None
    )
    if isinstance(value, Mapping):
        new_map = CommentedMap([(k, _value(v, sample)) for k, v in value.items()])
        if flow:
            new_map.fa.set_flow_style()
        return new_map
    if isinstance(value, list):
        new_seq = CommentedSeq([_value(v, sample) for v in value])
        if flow:
            new_seq.fa.set_flow_style()
        return new_seq
    return value
