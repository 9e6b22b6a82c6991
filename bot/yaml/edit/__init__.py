"""Byte-preserving edits of YAML files: set a leaf, add one, replace a node, remove a document.

Every edit is tried first with ruamel.yaml's round trip over the one document it changes, then,
when that changed lines it should not have, as a targeted line edit. A result is kept only when
(1) difflib finds changed lines only where the entry being changed is written, and (2) every
parser reads the new file as the old one with exactly this change: the gate's own reading
(bot.yaml.documents), PyYAML's safe loader on libyaml and ruamel.yaml's YAML 1.2 safe loader,
each that could read the old file. Otherwise EditError, never a file whose other bytes changed.

``document`` is the 0-based index of ``YamlFile.documents``; a path is a sequence of mapping
keys, where a decimal segment may also index a sequence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from yaml.nodes import MappingNode, ScalarNode

from bot.yaml.edit.file_lines import (
    MAX_EDIT_BYTES,
    Allowed,
    EditError,
    EditText,
    confined,
    decode,
    encode,
    rebuilt,
)
from bot.yaml.edit.line_edits import (
    add_lines,
    allowed_add,
    allowed_delete,
    allowed_set,
    delete_lines,
    is_null,
    set_lines,
)
from bot.yaml.edit.positions import (
    Spot,
    dotted,
    has_merge_key,
    is_empty,
    layout_of,
    locate,
    read_structure,
    shared_nodes,
)
from bot.yaml.edit.readers import READERS, changed_size, read_gate_matches
from bot.yaml.edit.roundtrip import roundtrip
from bot.yaml.edit.value_text import Layout, block_lines, plain_value, same

__all__ = [
    "MAX_EDIT_BYTES",
    "MAX_PATH_DEPTH",
    "EditError",
    "add_leaf",
    "new_file",
    "remove_document",
    "replace_node",
    "set_leaf",
    "set_or_add_leaf",
]

MAX_PATH_DEPTH: Final = 64
_MAX_STEPS: Final = 1000  # changes one replace_node may make, each checked on its own


def set_leaf(data: bytes, *, document: int, path: Sequence[str], value: object) -> bytes:
    """``value`` in place of the one at ``path``, which must exist (else EditError naming it)."""
    edit = _Edit(data, document)
    keys = _path(path, empty=False)
    edit.require(keys)
    edit.apply(_Step("set", keys, plain_value(value)))
    return edit.finish()


def add_leaf(data: bytes, *, document: int, path: Sequence[str], value: object) -> bytes:
    """A new key at ``path``, after the last entry of its parent mapping, which must exist."""
    edit = _Edit(data, document)
    keys = _path(path, empty=False)
    edit.apply(_Step("add", keys, plain_value(value)))
    return edit.finish()


def set_or_add_leaf(data: bytes, *, document: int, path: Sequence[str], value: object) -> bytes:
    """`set_leaf` when ``path`` exists, else `add_leaf`."""
    edit = _Edit(data, document)
    keys = _path(path, empty=False)
    kind = "set" if edit.locate(keys) is not None else "add"
    edit.apply(_Step(kind, keys, plain_value(value)))
    return edit.finish()


def replace_node(data: bytes, *, document: int, path: Sequence[str], value: object) -> bytes:
    """The node at ``path`` (``[]``: the whole document) becomes ``value``.

    A mapping is merged into the mapping there: unchanged entries are not touched (their
    comments stay), changed ones are set, new ones added after the others, missing ones removed.
    """
    edit = _Edit(data, document)
    keys = _path(path, empty=True)
    edit.require(keys)
    steps = edit.plan(keys, plain_value(value))
    if len(steps) > _MAX_STEPS:
        raise EditError(f"the replacement makes over {_MAX_STEPS} changes; it is not edited")
    for step in steps:
        edit.apply(step)
    return edit.finish()


def remove_document(data: bytes, *, document: int) -> bytes | None:
    """The file without that document (its ``---`` and the lines up to the next one's).

    None when no document would be left, only comments, blanks or markers: delete the file.
    """
    edit = _Edit(data, document)
    doc = edit.docs[document]
    lines = edit.text.lines
    new_lines = [*lines[: doc.start], *lines[doc.stop :]]
    text = rebuilt(edit.text, new_lines, Allowed(doc.start, doc.stop))
    if all(is_empty(d.root) for d in read_structure(text.text, len(text.lines))):
        return None
    for name in edit.expected:
        del edit.expected[name][document]
    edit.text = text
    return edit.finish()


def new_file(document: Mapping[str, object]) -> bytes:
    """A fresh file holding one document, in block style."""
    value = plain_value(document)
    if not isinstance(value, dict):
        raise EditError("a new file holds a mapping")
    lines = block_lines(value, 0, Layout()) if value else ["{}"]
    text = "\n".join(lines) + "\n"
    for name, read in READERS.items():
        values = read(text)
        if values is None or not same(values, [value]):
            raise EditError(f"the new file does not read back as written ({name})")
    return text.encode("utf-8")


# ---- one edit session ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Step:
    kind: str  # "set", "add" or "delete"
    path: tuple[str, ...]
    value: object = None


def _path(path: Sequence[str], *, empty: bool) -> tuple[str, ...]:
    keys = tuple(path)
    if isinstance(path, str) or not all(isinstance(k, str) for k in keys):
        raise EditError("a path is a sequence of keys (strings)")
    if len(keys) > MAX_PATH_DEPTH:
        raise EditError(f"the path is deeper than {MAX_PATH_DEPTH} keys")
    if not keys and not empty:
        raise EditError("the path is empty")
    return keys


class _Edit:
    """The file as it is after the steps so far, and what each parser must read from it."""

    def __init__(self, data: bytes, document: int) -> None:
        if isinstance(document, bool) or not isinstance(document, int) or document < 0:
            raise EditError("the document index is a number from 0")
        self.text = decode(data)
        self.document = document
        self.expected: dict[str, list[object]] = {}
        for name, read in READERS.items():
            values = read(self.text.text)
            if values is not None:
                self.expected[name] = values
            elif name == "gate":
                raise EditError("the file does not read as YAML, so it is not edited")
        self._load()
        if document >= len(self.docs):
            raise EditError(f"there is no document {document} (the file has {len(self.docs)})")

    def _load(self) -> None:
        self.docs = read_structure(self.text.text, len(self.text.lines))
        if len(self.docs) != len(self.expected["gate"]):
            raise EditError("the file's documents could not be told apart")
        self.root = self.docs[self.document].root if self.document < len(self.docs) else None
        self.shared = shared_nodes(self.root) if self.root is not None else set()
        self.layout = layout_of([d.root for d in self.docs])

    def locate(self, path: Sequence[str]) -> Spot | None:
        assert self.root is not None
        return locate(self.root, path, self.shared)

    def require(self, path: Sequence[str]) -> Spot:
        spot = self.locate(path)
        if spot is None:
            raise EditError(f"missing key {dotted(path)}")
        return spot

    def plan(self, path: tuple[str, ...], value: object) -> list[_Step]:
        """The steps that turn the node at ``path`` into ``value``, touching the least."""
        node = self.require(path).node
        mergeable = isinstance(node, MappingNode) and not node.flow_style and node.value
        if not (isinstance(value, dict) and value and mergeable) or has_merge_key(node):
            return [] if self._reads_as(path, value) else [_Step("set", path, value)]
        assert isinstance(node, MappingNode)
        old = [k.value for k, _ in node.value if isinstance(k, ScalarNode)]
        if len(old) != len(node.value) or len(set(old)) != len(old):
            return [_Step("set", path, value)]
        steps: list[_Step] = []
        for key, item in value.items():
            child = (*path, key)
            if key in old:
                if self.locate(child) is not None:  # a str key, not 1 or true
                    steps.extend(self.plan(child, item))
                    continue
                return [_Step("set", path, value)]
            steps.append(_Step("add", child, item))
        steps.extend(_Step("delete", (*path, k)) for k in old if k not in value)
        return steps

    def _reads_as(self, path: Sequence[str], value: object) -> bool:
        return all(
            same(_at(values[self.document], path), value) for values in self.expected.values()
        )

    def apply(self, step: _Step) -> None:
        lines = self.text.lines
        assert self.root is not None
        if step.kind == "add":
            parent = self.locate(step.path[:-1])
            if parent is None:
                raise EditError(f"missing parent {dotted(step.path[:-1])}")
            if self.locate(step.path) is not None:
                raise EditError(f"{dotted(step.path)} already exists")
            if has_merge_key(parent.node):
                raise EditError(f"{dotted(step.path[:-1])} has a merge key; it is not edited")
            if not isinstance(parent.node, MappingNode) and not is_null(parent.node):
                raise EditError(f"{dotted(step.path[:-1])} is not a mapping")
            allowed = allowed_add(parent, lines)
            key = step.path[-1]

            def fallback() -> list[str]:
                return add_lines(lines, parent, key, step.value, self.layout)

        else:
            spot = self.require(step.path)
            if step.kind == "delete":
                allowed = allowed_delete(spot, lines)

                def fallback() -> list[str]:
                    return delete_lines(lines, spot)

            else:
                allowed = allowed_set(spot, lines)

                def fallback() -> list[str]:
                    return set_lines(lines, spot, step.value, self.layout)

        expected = _applied(self.expected["gate"], self.document, step)
        text = self._best(step, allowed, expected, fallback)
        for name, values in self.expected.items():
            self.expected[name] = (
                expected if name == "gate" else _applied(values, self.document, step)
            )
        self.text = text
        self._load()

    def _best(
        self,
        step: _Step,
        allowed: Allowed,
        expected: list[object],
        fallback: Callable[[], list[str]],
    ) -> EditText:
        """The round trip's result and the line edit's, each kept only when it changes no other
        line and reads as intended; the one that changes fewer characters wins, the round
        trip's on a tie (it may, say, re-space a comment on the line it changes)."""
        assert self.root is not None
        lines = self.text.lines
        good: list[EditText] = []
        tried = roundtrip(lines, self.root, step.kind, step.path, step.value, self.layout)
        if tried is not None and confined(lines, tried, allowed):
            text = rebuilt(self.text, tried, allowed)
            if read_gate_matches(text, expected):
                good.append(text)
        try:
            candidate = fallback()
        except EditError:
            if good:
                return good[0]
            raise  # its message says why the edit cannot be made
        if confined(lines, candidate, allowed):
            text = rebuilt(self.text, candidate, allowed)
            if read_gate_matches(text, expected):
                good.append(text)
        if not good:
            raise EditError(f"{dotted(step.path)} cannot be changed without changing other lines")
        return min(good, key=lambda text: changed_size(lines, text.lines))  # stable: ties to [0]

    def finish(self) -> bytes:
        """The new bytes, once every parser that read the old file reads them as intended."""
        for name, expected in self.expected.items():
            values = READERS[name](self.text.text)
            if values is None or not same(values, expected):
                raise EditError(f"the edited file does not read as intended ({name})")
        return encode(self.text)


def _at(value: object, path: Sequence[str]) -> object:
    for segment in path:
        if isinstance(value, dict) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.isdecimal() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return _Missing
    return value


class _Missing:
    pass


def _applied(values: list[object], document: int, step: _Step) -> list[object]:
    """The documents as they read once ``step`` is made: copies along the path only."""

    def change(node: object, depth: int) -> object:
        if depth == len(step.path):
            return step.value
        segment = step.path[depth]
        last = depth == len(step.path) - 1
        if node is None and step.kind == "add" and last:
            return {segment: step.value}
        if isinstance(node, dict):
            copy: dict[object, object] = dict(node)
            if last and step.kind == "delete":
                del copy[segment]
            elif last and step.kind == "add":
                copy[segment] = step.value
            else:
                copy[segment] = change(copy[segment], depth + 1)
            return copy
        if isinstance(node, list) and segment.isdecimal():
            items = list(node)
            items[int(segment)] = change(items[int(segment)], depth + 1)
            return items
        raise EditError(f"{dotted(step.path[: depth + 1])} reads differently to another parser")

    try:
        new = change(values[document], 0)
    except (KeyError, IndexError):
        raise EditError(f"{dotted(step.path)} reads differently to another parser") from None
    return [*values[:document], new, *values[document + 1 :]]
