"""Every folder of a repository with the Kubernetes objects counted under it (design.md 6.6). Pure.

A folder qualifies when the YAML documents under it are mostly Kubernetes objects: at least
:data:`MIN_OBJECTS` objects, and objects are at least 80% of its documents. Documents are
counted in the YAML files the gate would parse, so kustomization files (build directives) and
``.sops.yaml`` (an operator artifact) are left out; an empty document counts for nothing, one
that does not parse as a document that is not an object.

:meth:`Folders.select` picks the top-most qualifying folders, so no two overlap. Folders
:mod:`bot.onboarding.skip` names are never selected, nor anything inside them.

Bounds: a file over the gate's size limit is not read (the gate refuses it unread); at most
:data:`MAX_FILES_READ` files and :data:`MAX_BYTES_READ` bytes are read, in path order, and files
past either bound are not counted. Apart from one sort of the folders, the work is linear in
the number of entries.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from bot.gate.policy import CONFIG_FILE
from bot.gate.structural import BUILD_DIRECTIVES, OPERATOR_ARTIFACTS, YAML_SUFFIXES
from bot.git.snapshot import Entry, EntryKind, Snapshot
from bot.onboarding import skip
from bot.paths import path_sort_key
from bot.yaml.documents import parse_yaml

MIN_OBJECTS: Final = 3
# "Mostly Kubernetes objects": objects / documents >= 4/5, compared in integers.
SHARE_NUMERATOR: Final = 4
SHARE_DENOMINATOR: Final = 5
MAX_FILES_READ: Final = 5000
MAX_BYTES_READ: Final = 64 << 20
_READ_BATCH: Final = 500  # files per read_many call, so the bytes held at once stay small
_CHART_VALUES: Final = frozenset({"values.yaml", "values.yml"})
_CHART_TEMPLATES: Final = "templates"


def mostly_objects(objects: int, documents: int, *, at_least: int = MIN_OBJECTS) -> bool:
    """At least ``at_least`` objects, and objects at least four fifths of the documents."""
    return objects >= at_least and objects * SHARE_DENOMINATOR >= documents * SHARE_NUMERATOR


@dataclass(slots=True)
class Folder:
    path: str
    children: list[str] = field(default_factory=list)
    objects: int = 0
    documents: int = 0
    yaml_files: int = 0  # counted, read or not: what a skipped folder is said to hold
    has_kustomization: bool = False
    has_chart_file: bool = False
    has_values: bool = False
    has_templates: bool = False
    skipped: str | None = None  # why it and everything inside is never proposed, if it is not
    holds_chart: bool = False  # it or a folder below it looks like a chart

    @property
    def is_chart(self) -> bool:
        return self.has_chart_file or (self.has_values and self.has_templates)

    @property
    def qualifies(self) -> bool:
        return not self.holds_chart and mostly_objects(self.objects, self.documents)


class Folders:
    """The folders of one snapshot, each with what was counted under it."""

    def __init__(self, by_path: dict[str, Folder]) -> None:
        self._by_path = by_path

    def __getitem__(self, path: str) -> Folder:
        return self._by_path[path]

    def get(self, path: str) -> Folder | None:
        return self._by_path.get(path)

    @property
    def root(self) -> Folder:
        return self._by_path[""]

    def skipped(self) -> list[Folder]:
        """The top-most skipped folders with YAML files enough to look like a target (they
        are not read, so their objects are not counted)."""
        found = []
        stack = list(reversed(self.root.children))
        while stack:
            folder = self._by_path[stack.pop()]
            if folder.skipped is not None:
                if folder.yaml_files >= MIN_OBJECTS:
                    found.append(folder)
            else:
                stack.extend(reversed(folder.children))
        return found

    def select(self, paths: Sequence[str]) -> list[str]:
        """The top-most qualifying folders at or below ``paths``, in path order; a stack, not
        recursion, since a tree may be thousands of folders deep."""
        chosen: list[str] = []
        stack = list(reversed(paths))
        while stack:
            folder = self._by_path[stack.pop()]
            if folder.skipped is not None:
                continue
            if folder.qualifies:
                chosen.append(folder.path)
            else:
                stack.extend(reversed(folder.children))
        return chosen

    def below(self, path: str) -> list[str]:
        """The top-most qualifying folders strictly below ``path``."""
        return self.select(self._by_path[path].children)


def count_folders(snapshot: Snapshot, max_yaml_bytes: int) -> Folders:
    """Every folder of the tree, with its objects and documents counted."""
    folders = _folders(snapshot)
    order = sorted(folders, key=path_sort_key)  # a parent before everything below it
    for path in order:
        folder = folders[path]
        parent = folders.get(parent_of(path)) if path else None
        inherited = parent.skipped if parent is not None else None
        folder.skipped = inherited or skip.skip_reason(path, chart=folder.is_chart)
    _count_documents(snapshot, folders, max_yaml_bytes)
    for path in reversed(order):  # everything below a folder before the folder
        folder = folders[path]
        folder.holds_chart = folder.holds_chart or folder.is_chart
        if path:
            parent = folders[parent_of(path)]
            parent.objects += folder.objects
            parent.documents += folder.documents
            parent.yaml_files += folder.yaml_files
            parent.holds_chart = parent.holds_chart or folder.holds_chart
    for folder in folders.values():
        folder.children.sort(key=path_sort_key)
    return Folders(folders)


def parent_of(path: str) -> str:
    return path.rpartition("/")[0]


def _folders(snapshot: Snapshot) -> dict[str, Folder]:
    """Every folder of the tree with what its own entries say; one pass, each folder once."""
    folders = {"": Folder("")}
    for entry in snapshot:
        parent, _, name = entry.path.rpartition("/")
        _register(folders, parent)
        folder = folders[parent]
        if entry.kind is not EntryKind.FILE:
            continue
        if name in BUILD_DIRECTIVES:
            folder.has_kustomization = True
        elif name.endswith(YAML_SUFFIXES) and name not in OPERATOR_ARTIFACTS:
            folder.yaml_files += 1
        if name == skip.CHART_FILE:
            folder.has_chart_file = True
        elif name in _CHART_VALUES:
            folder.has_values = True
    return folders


def _register(folders: dict[str, Folder], path: str) -> None:
    """Add ``path`` and its missing ancestors; it stops at the first known one, so each folder
    is added once over the whole walk (the root is always known)."""
    added: list[str] = []
    while path not in folders:
        folders[path] = Folder(path)
        added.append(path)
        path = parent_of(path)
    for path in added:
        parent, _, name = path.rpartition("/")
        folders[parent].children.append(path)
        if name == _CHART_TEMPLATES:
            folders[parent].has_templates = True


def _count_documents(snapshot: Snapshot, folders: dict[str, Folder], max_bytes: int) -> None:
    for batch in _batches(_readable(snapshot, folders, max_bytes)):
        for entry, data in zip(batch, snapshot.read_many(batch), strict=True):
            objects, documents = count_documents(data)
            folder = folders[parent_of(entry.path)]
            folder.objects += objects
            folder.documents += documents


def _readable(snapshot: Snapshot, folders: dict[str, Folder], max_bytes: int) -> Iterator[Entry]:
    """The YAML files worth reading, within the bounds, in path order."""
    files = budget = 0
    for entry in snapshot:
        if entry.kind is not EntryKind.FILE or not entry.path.endswith(YAML_SUFFIXES):
            continue
        parent, _, name = entry.path.rpartition("/")
        if name in BUILD_DIRECTIVES or name in OPERATOR_ARTIFACTS or entry.path == CONFIG_FILE:
            continue
        if entry.size > max_bytes or folders[parent].skipped is not None:
            continue  # never proposed, so never worth the budget
        if files >= MAX_FILES_READ or budget + entry.size > MAX_BYTES_READ:
            return
        files += 1
        budget += entry.size
        yield entry


def _batches(entries: Iterator[Entry]) -> Iterator[list[Entry]]:
    batch: list[Entry] = []
    for entry in entries:
        batch.append(entry)
        if len(batch) == _READ_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def count_documents(data: bytes) -> tuple[int, int]:
    """(Kubernetes objects, documents) in one file; an unreadable document counts as one
    document that is not an object, an empty one as nothing."""
    objects = documents = 0
    for doc in parse_yaml(data).documents:
        if doc.error is None and doc.value is None:
            continue
        documents += 1
        if doc.error is None and looks_like_object(doc.value):
            objects += 1
    return objects, documents


def looks_like_object(value: object) -> bool:
    """The gate's KRM test (design.md 3.2): non-empty string apiVersion, kind, metadata.name."""
    if not isinstance(value, dict):
        return False
    metadata = value.get("metadata")
    return (
        _text(value.get("apiVersion"))
        and _text(value.get("kind"))
        and isinstance(metadata, dict)
        and _text(metadata.get("name"))
    )


def _text(value: object) -> bool:
    return isinstance(value, str) and value != ""
