"""A target's capabilities file: the API discovery of its cluster, recorded into the repository.

Accepted forms:

- a recorded discovery document: aggregated discovery (``kubectl get --raw /apis`` with the
  aggregated ``Accept`` header, an ``APIGroupDiscoveryList``), a legacy ``APIResourceList``
  (``kubectl get --raw /api/v1``), or a JSON/YAML list or YAML stream of those;
- the text table of ``kubectl api-resources -o wide``.

The file is untrusted: it is size-bounded, parsed with the safe loader, and any problem is a
:class:`CapabilitiesError` whose one-line message names the line where one is known.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import yaml

from bot.errors import IchorError
from bot.registry.api_resources import TableError, looks_like_table, read_table
from bot.registry.discovery import (
    DocumentError,
    Path,
    ServedType,
    SubresourceKind,
    is_discovery,
    read_discovery,
)

MAX_CAPABILITIES_BYTES = 8 << 20
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class CapabilitiesError(IchorError):
    """A capabilities file that cannot be read as recorded discovery."""


@dataclass(frozen=True, slots=True)
class Capabilities:
    types: tuple[ServedType, ...]
    subresource_kinds: tuple[SubresourceKind, ...] = ()
    form: str = "discovery"  # "discovery" | "api-resources"


def parse_capabilities(data: bytes) -> Capabilities:
    if len(data) > MAX_CAPABILITIES_BYTES:
        raise CapabilitiesError(
            f"the file is {len(data)} bytes; the limit is {MAX_CAPABILITIES_BYTES}"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CapabilitiesError(f"line {line}: the file is not UTF-8 text") from None
    if looks_like_table(text):
        try:
            return Capabilities(read_table(text), form="api-resources")
        except TableError as exc:
            raise CapabilitiesError(f"kubectl api-resources table: {exc}") from None
    docs = _documents(text)
    if not docs:
        raise CapabilitiesError("the file holds no discovery document")
    try:
        found = read_discovery(docs)
    except DocumentError as exc:
        where = _line_of(text, exc.path, len(docs) > 1)
        prefix = f"line {where}: " if where else ""
        raise CapabilitiesError(f"{prefix}{exc}") from None
    return Capabilities(found.types, found.subresource_kinds)


def _documents(text: str) -> list[object]:
    """The discovery documents in the file: one, a list of them, or a YAML stream."""
    stripped = text.lstrip()
    try:
        if stripped.startswith(("{", "[")):
            loaded: list[object] = [json.loads(text)]
        else:
            loaded = [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]
    except json.JSONDecodeError as exc:
        raise CapabilitiesError(f"line {exc.lineno}: not valid JSON: {exc.msg}") from None
    except yaml.MarkedYAMLError as exc:
        where = f"line {exc.problem_mark.line + 1}: " if exc.problem_mark else ""
        raise CapabilitiesError(f"{where}not valid YAML: {exc.problem or exc}") from None
    except (yaml.YAMLError, ValueError) as exc:
        raise CapabilitiesError(f"not valid YAML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise CapabilitiesError("the document is nested too deeply") from None
    if len(loaded) == 1 and isinstance(loaded[0], list):
        loaded = list(loaded[0])
    # A `kind: List` wrapper (what `kubectl get -o yaml` writes) holds the documents in items.
    if len(loaded) == 1 and isinstance(loaded[0], dict) and loaded[0].get("kind") == "List":
        items = loaded[0].get("items")
        loaded = list(items) if isinstance(items, list) else []
    if loaded and not any(is_discovery(d) for d in loaded):
        first = loaded[0]
        kind = first.get("kind") if isinstance(first, dict) else None
        raise CapabilitiesError(
            f"not recorded discovery: expected an APIGroupDiscoveryList or APIResourceList "
            f"(or a `kubectl api-resources -o wide` table), found kind {kind!r}"
        )
    return loaded


def _line_of(text: str, path: Path, listed: bool) -> int | None:
    """The 1-based line of the node at ``path``, found by composing the text again.

    Only run for an error, so the happy path parses once. JSON is close enough to YAML for
    this; when it is not, the message simply has no line.
    """
    try:
        nodes: list[yaml.Node] = list(yaml.compose_all(text, Loader=_Loader))
    except (yaml.YAMLError, ValueError, RecursionError):
        return None
    # Unwrap the same containers as _documents: a list, or a `kind: List`'s items.
    if len(nodes) == 1 and isinstance(nodes[0], yaml.SequenceNode):
        nodes = list(nodes[0].value)
    elif len(nodes) == 1 and _child(nodes[0], "kind") is not None:
        kind = _child(nodes[0], "kind")
        items = _child(nodes[0], "items")
        if isinstance(kind, yaml.ScalarNode) and kind.value == "List" and items is not None:
            nodes = list(items.value) if isinstance(items, yaml.SequenceNode) else []
    steps = list(path)
    index = steps.pop(0) if listed and steps and isinstance(steps[0], int) else 0
    if not isinstance(index, int) or index >= len(nodes):
        return None
    node = nodes[index]
    for step in steps:
        child = _child(node, step)
        if child is None:
            break
        node = child
    return int(node.start_mark.line) + 1


def _child(node: yaml.Node, step: str | int) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode) and isinstance(step, str):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == step:
                return value  # type: ignore[no-any-return]
    if isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
        return node.value[step]  # type: ignore[no-any-return]
    return None
