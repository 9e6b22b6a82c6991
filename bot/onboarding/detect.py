"""Which folders of a repository to propose as GitTarget paths (design.md 6.6). Pure.

A folder qualifies when the YAML documents under it are mostly Kubernetes objects: at least
:data:`MIN_OBJECTS` objects, and objects are at least 80% of its documents. Documents are
counted in the YAML files the gate would parse, so kustomization files (build directives) and
``.sops.yaml`` (an operator artifact) are left out; an empty document counts for nothing, one
that does not parse as a document that is not an object.

The proposal is the top-most qualifying folders, so no two overlap, refined by three rules:

- **A kustomization root beats a plain parent.** A qualifying folder with no
  ``kustomization.yaml`` at its top gives way to the top-most kustomization folders below it
  when every one of them qualifies and together they hold all of its objects (``clusters/prod``
  and ``clusters/staging`` rather than ``clusters``); otherwise objects would be left unguarded,
  so the parent stays.
- **The repository root is the last resort**, proposed only when no other folder qualifies: a
  root target would claim the repository's README, CI files and ``.ichor.yaml``.
- **Never proposed**, nor anything inside: hidden folders (``.github``, ``.archive``: tooling
  and retired files), folders ``.ichor.yaml`` cannot name (a ``\\`` in the path, a name that is
  not UTF-8), and Helm charts, a folder holding ``Chart.yaml`` or ``values.yaml`` beside a
  ``templates/`` folder (its templates are not objects). A folder that contains a chart is not
  proposed either, since the gate would refuse the chart's files; qualifying folders beside the
  chart are.

At most ``max_targets`` are kept: kustomization roots first, then those with the most objects,
then path order. The result is in path order, named from the path (``clusters/prod`` is
``clusters-prod``) and unique.

Bounds: a file over the gate's size limit is not read (the gate refuses it unread); at most
:data:`MAX_FILES_READ` files and :data:`MAX_BYTES_READ` bytes are read, in path order, and files
past either bound are not counted. Apart from one sort of the folders, the work is linear in
the number of entries.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from bot.config.paths import normalize_repo_path
from bot.gate.policy import CONFIG_FILE, DEFAULT_MAX_YAML_BYTES
from bot.gate.structural import BUILD_DIRECTIVES, OPERATOR_ARTIFACTS, YAML_SUFFIXES
from bot.git.snapshot import Entry, EntryKind, Snapshot
from bot.paths import path_sort_key
from bot.yaml.documents import parse_yaml

MIN_OBJECTS: Final = 3
# "Mostly Kubernetes objects": objects / documents >= 4/5, compared in integers.
SHARE_NUMERATOR: Final = 4
SHARE_DENOMINATOR: Final = 5
MAX_TARGETS: Final = 20
MAX_FILES_READ: Final = 5000
MAX_BYTES_READ: Final = 64 << 20
_READ_BATCH: Final = 500  # files per read_many call, so the bytes held at once stay small
MAX_NAME: Final = 63
ROOT_NAME: Final = "root"
_FALLBACK_NAME: Final = "target"  # a path with no [a-z0-9] at all
CHART_FILE: Final = "Chart.yaml"
_CHART_VALUES: Final = frozenset({"values.yaml", "values.yml"})
_CHART_TEMPLATES: Final = "templates"
_OUTSIDE_NAME = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A proposed target: its name and path (``""`` is the repository root), with what was
    counted under it."""

    name: str
    path: str
    objects: int
    documents: int
    has_kustomization: bool


@dataclass(slots=True)
class _Folder:
    path: str
    children: list[str] = field(default_factory=list)
    objects: int = 0
    documents: int = 0
    has_kustomization: bool = False
    has_chart_file: bool = False
    has_values: bool = False
    has_templates: bool = False
    in_chart: bool = False  # it or a folder above it looks like a chart
    holds_chart: bool = False  # it or a folder below it looks like a chart

    @property
    def is_chart(self) -> bool:
        return self.has_chart_file or (self.has_values and self.has_templates)

    @property
    def qualifies(self) -> bool:
        return (
            not self.holds_chart
            and self.objects >= MIN_OBJECTS
            and self.objects * SHARE_DENOMINATOR >= self.documents * SHARE_NUMERATOR
        )


def detect_targets(
    snapshot: Snapshot,
    *,
    max_targets: int = MAX_TARGETS,
    max_yaml_bytes: int = DEFAULT_MAX_YAML_BYTES,
) -> tuple[Candidate, ...]:
    """The folders to propose as targets, in path order, named uniquely (design.md 2)."""
    folders = _folders(snapshot)
    order = sorted(folders, key=path_sort_key)  # a parent before everything below it
    for path in order:
        folder = folders[path]
        parent = folders.get(_parent(path)) if path else None
        folder.in_chart = folder.is_chart or (parent is not None and parent.in_chart)
    _count_documents(snapshot, folders, max_yaml_bytes)
    for path in reversed(order):  # everything below a folder before the folder
        folder = folders[path]
        folder.holds_chart = folder.holds_chart or folder.is_chart
        if path:
            parent = folders[_parent(path)]
            parent.objects += folder.objects
            parent.documents += folder.documents
            parent.holds_chart = parent.holds_chart or folder.holds_chart
    for folder in folders.values():
        folder.children.sort(key=path_sort_key)
    root = folders[""]
    chosen = _select(folders, root.children)
    if not chosen and root.qualifies:
        chosen = [""]
    kept = sorted(chosen, key=lambda p: _preference(folders[p]))[: max(max_targets, 0)]
    kept.sort(key=path_sort_key)
    names = target_names(kept)
    return tuple(
        Candidate(
            name,
            path,
            folders[path].objects,
            folders[path].documents,
            folders[path].has_kustomization,
        )
        for name, path in zip(names, kept, strict=True)
    )


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


def _folders(snapshot: Snapshot) -> dict[str, _Folder]:
    """Every folder of the tree with what its own entries say; one pass, each folder once."""
    folders = {"": _Folder("")}
    for entry in snapshot:
        parent, _, name = entry.path.rpartition("/")
        _register(folders, parent)
        folder = folders[parent]
        if entry.kind is not EntryKind.FILE:
            continue
        if name in BUILD_DIRECTIVES:
            folder.has_kustomization = True
        elif name == CHART_FILE:
            folder.has_chart_file = True
        elif name in _CHART_VALUES:
            folder.has_values = True
    return folders


def _register(folders: dict[str, _Folder], path: str) -> None:
    """Add ``path`` and its missing ancestors; it stops at the first known one, so each folder
    is added once over the whole walk (the root is always known)."""
    added: list[str] = []
    while path not in folders:
        folders[path] = _Folder(path)
        added.append(path)
        path = _parent(path)
    for path in added:
        parent, _, name = path.rpartition("/")
        folders[parent].children.append(path)
        if name == _CHART_TEMPLATES:
            folders[parent].has_templates = True


def _count_documents(snapshot: Snapshot, folders: dict[str, _Folder], max_bytes: int) -> None:
    for batch in _batches(_readable(snapshot, folders, max_bytes)):
        for entry, data in zip(batch, snapshot.read_many(batch), strict=True):
            objects, documents = count_documents(data)
            folder = folders[_parent(entry.path)]
            folder.objects += objects
            folder.documents += documents


def _readable(snapshot: Snapshot, folders: dict[str, _Folder], max_bytes: int) -> Iterator[Entry]:
    """The YAML files worth reading, within the bounds, in path order."""
    files = budget = 0
    for entry in snapshot:
        if entry.kind is not EntryKind.FILE or not entry.path.endswith(YAML_SUFFIXES):
            continue
        parent, _, name = entry.path.rpartition("/")
        if name in BUILD_DIRECTIVES or name in OPERATOR_ARTIFACTS or entry.path == CONFIG_FILE:
            continue
        if entry.size > max_bytes or folders[parent].in_chart:
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


def _select(folders: dict[str, _Folder], paths: Sequence[str]) -> list[str]:
    """The top-most qualifying folders at or below ``paths``, in path order; a stack, not
    recursion, since a tree may be thousands of folders deep."""
    chosen: list[str] = []
    stack = list(reversed(paths))
    while stack:
        folder = folders[stack.pop()]
        if not _proposable(folder):
            continue
        if not folder.qualifies:
            stack.extend(reversed(folder.children))
            continue
        split = None if folder.has_kustomization else _kustomization_split(folders, folder)
        chosen.extend(split or (folder.path,))
    return chosen


def _proposable(folder: _Folder) -> bool:
    hidden = folder.path.rpartition("/")[2].startswith(".")
    return not folder.in_chart and not hidden and configurable(folder.path)


def _kustomization_split(folders: dict[str, _Folder], folder: _Folder) -> list[str] | None:
    """The top-most kustomization folders below ``folder``, when each may be proposed and
    qualifies and together they hold every object of ``folder``; else None."""
    found: list[str] = []
    stack = list(reversed(folder.children))
    while stack:
        below = folders[stack.pop()]
        if not below.has_kustomization:
            stack.extend(reversed(below.children))
        elif _proposable(below) and below.qualifies:
            found.append(below.path)
        else:
            return None
    if not found or sum(folders[p].objects for p in found) != folder.objects:
        return None
    return found


def configurable(path: str) -> bool:
    """Whether ``.ichor.yaml`` can name ``path``: a valid target path, in UTF-8 (a name that
    is not UTF-8 cannot be written in the file). Everything below such a folder shares it."""
    if path == "":
        return True
    try:
        normalize_repo_path(path)
        path.encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    return True


def _preference(folder: _Folder) -> tuple[bool, int, bytes]:
    return (not folder.has_kustomization, -folder.objects, path_sort_key(folder.path))


def target_names(paths: Sequence[str]) -> list[str]:
    """A valid, unique target name for each path (design.md 2): ``clusters/prod`` becomes
    ``clusters-prod``. A name already given gets ``-2``, ``-3`` ...; paths that are their name
    but for ``/`` choose first, so ``team-a`` keeps its name beside ``Team.A``."""
    bases = [name_for(path) for path in paths]
    exact = [i for i, path in enumerate(paths) if bases[i] == path.replace("/", "-")]
    rest = [i for i in range(len(paths)) if bases[i] != paths[i].replace("/", "-")]
    taken: set[str] = set()
    names = [""] * len(paths)
    for i in exact + rest:
        name, n = bases[i], 1
        while name in taken:
            n += 1
            suffix = f"-{n}"
            name = bases[i][: MAX_NAME - len(suffix)].rstrip("-") + suffix
        taken.add(name)
        names[i] = name
    return names


def name_for(path: str) -> str:
    """The name a path suggests: lowercased, every run outside ``[a-z0-9]`` one ``-``."""
    if path == "":
        return ROOT_NAME
    name = _OUTSIDE_NAME.sub("-", path.lower()).strip("-")[:MAX_NAME].rstrip("-")
    return name or _FALLBACK_NAME  # so always TARGET_NAME_PATTERN
