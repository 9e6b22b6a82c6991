"""A key written twice in one YAML mapping, which YAML 1.2, kubectl and kustomize refuse.

Works on composed nodes (PyYAML's or ruamel.yaml's), before a mapping is built: reading the
last value instead could turn one kind of object into another. Two keys are the same when they
build the same value from the same text (``kind`` and ``"kind"``); ``on`` and ``yes`` both
build ``True`` in YAML 1.1 but are different keys, and a key merged in with ``<<`` may repeat
an own key (the own key wins). Linear in the keys; nothing is resolved unless two texts match.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MERGE_TAG = "tag:yaml.org,2002:merge"
KeyName = Callable[[Any], object]  # a scalar key node -> the value it builds
KeyText = Callable[[Any], str]  # a collection key node -> its source text


class DuplicateKey(Exception):
    """The message names the key and both lines; ``line`` (1-based) is the second one."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def check_own_keys(node: Any, checked: set[int], name_of: KeyName, text_of: KeyText) -> None:
    """Check a mapping's own keys (not merged ones), and those of the mappings it merges.

    Merging rewrites the merged mappings too, so they are checked first: a merge source can be
    flattened through an alias before a walk reaches it where it is written. ``checked`` holds
    the mappings already checked, so each is checked once.
    """
    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) in checked:
            continue
        checked.add(id(current))
        merges = [(k, v) for k, v in current.value if k.tag == MERGE_TAG]
        if len(merges) > 1:
            raise _duplicate("<<", merges[0][0], merges[1][0])
        if not merges:
            check_keys_once(current.value, name_of, text_of)
            continue
        check_keys_once([p for p in current.value if p[0].tag != MERGE_TAG], name_of, text_of)
        source = merges[0][1]
        items = source.value if source.id == "sequence" else [source]
        stack.extend(item for item in items if item.id == "mapping")


def check_keys_once(pairs: list[Any], name_of: KeyName, text_of: KeyText) -> None:
    """Raise :class:`DuplicateKey` for the first key of ``pairs`` written twice."""
    texts = [k.value if k.id == "scalar" else text_of(k) for k, _ in pairs]
    if len(set(texts)) == len(texts):
        return  # the common case, without resolving a single key
    first: dict[tuple[type, object, str], Any] = {}
    for (key, _), text in zip(pairs, texts, strict=True):
        name = name_of(key) if key.id == "scalar" else text
        seen = first.setdefault((type(name), name, text), key)
        if seen is not key:
            raise _duplicate(text, seen, key)


def _duplicate(text: str, first: Any, again: Any) -> DuplicateKey:
    line, other = first.start_mark.line + 1, again.start_mark.line + 1
    shown = text if len(text) <= 64 else text[:61] + "..."
    where = f"on line {line}" if line == other else f"at lines {line} and {other}"
    return DuplicateKey(f"mapping key {shown!r} is defined twice, {where}", other)
