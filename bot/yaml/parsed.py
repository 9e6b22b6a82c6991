"""The values a YAML file reads into: its documents, in order, and where each starts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# Where parts of a document start, 1-based: ``(key,)`` for a top-level key, ``(key, child)``
# for a key (or, by index, an item) of the value under a top-level key the reader asked for.
LinePath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class YamlDocument:
    index: int  # 0-based position in the stream
    line: int  # 1-based line where the document starts (its first content line)
    value: object  # plain data: dict/list/str/int/float/bool/None (None when empty)
    error: str | None = None  # set when this document (and so the rest) could not be read
    error_line: int | None = None
    lines: Mapping[LinePath, int] = field(default_factory=dict)  # when ``parse_yaml`` is asked


@dataclass(frozen=True, slots=True)
class YamlFile:
    documents: tuple[YamlDocument, ...]  # in order; at most one has `error`, and it is the last
    confirmed_by_yaml12: bool = False  # libyaml rejected the file; ruamel.yaml's reading is used

    @property
    def error(self) -> YamlDocument | None:
        last = self.documents[-1] if self.documents else None
        return last if last is not None and last.error is not None else None

    @property
    def is_empty(self) -> bool:
        return all(d.value is None and d.error is None for d in self.documents)
