"""The whole gate: the structural roles, then the content of what they let through.

``run_gate`` reads from the snapshot (the only I/O, through the snapshot's lazy readers) and
from an optional facts cache keyed by blob id; everything it decides is a pure function of
the tree's contents and the policy.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from bot.gate.content.cache import FactsCache
from bot.gate.content.context import TargetContext, build_context
from bot.gate.content.facts import FileFacts, extract_facts
from bot.gate.content.identity import Identity, object_identity
from bot.gate.content.rules import ContentInput, check_content
from bot.gate.policy import DEFAULT_MAX_YAML_BYTES, GatePolicy, TargetPolicy
from bot.gate.report import Issue, Report, TargetReport
from bot.gate.structural import StructuralResult, classify_target
from bot.git.snapshot import Entry, EntryKind, Snapshot
from bot.paths import display_path, is_within
from bot.registry.capabilities import Capabilities, CapabilitiesError, parse_capabilities
from bot.registry.crd import CrdFacts
from bot.registry.registry import TypeRegistry, build_registry

# The safety scan of ignored YAML files is bounded: it must never cost more than the check.
MAX_IGNORED_SCAN_FILES = 500
MAX_IGNORED_SCAN_BYTES = 16 << 20
# Blobs read per streamed request: bounds the memory held at once.
_READ_CHUNK = 256
_RegistryKey = tuple[tuple[CrdFacts, ...], Capabilities | None]


def run_gate(
    snapshot: Snapshot,
    policy: GatePolicy,
    *,
    cache: FactsCache | None = None,
    registries: RegistryCache | None = None,
) -> Report:
    """``registries`` carries type registries from one run to the next (a worker keeps one);
    without it they are shared by the targets of this run only."""
    reader = _FactsReader(snapshot, cache, registries or RegistryCache())
    targets = tuple(_check_target(snapshot, t, policy, reader) for t in policy.targets)
    return Report(revision=snapshot.revision, targets=targets)


class _FactsReader:
    """Facts for many entries at once: cache hits first, the misses read in one stream."""

    def __init__(
        self, snapshot: Snapshot, cache: FactsCache | None, registries: RegistryCache
    ) -> None:
        self._snapshot = snapshot
        self._cache = cache
        self.registries = registries

    def facts(self, entries: Sequence[Entry], *, digests: bool) -> dict[str, FileFacts]:
        """With ``digests`` (a strict target's files), facts cached without them are read
        again, and cached again with them."""
        found: dict[str, FileFacts] = {}
        missing: list[Entry] = []
        for entry in entries:
            cached = None
            if self._cache is not None and entry.oid is not None:
                cached = self._cache.get(entry.oid)
            if cached is None or (digests and not cached.digested):
                missing.append(entry)
            else:
                found[entry.path] = cached
        for start in range(0, len(missing), _READ_CHUNK):
            chunk = missing[start : start + _READ_CHUNK]
            for entry, data in zip(chunk, self._snapshot.read_many(chunk), strict=True):
                facts = extract_facts(data, digests=digests)
                found[entry.path] = facts
                if self._cache is not None and entry.oid is not None:
                    self._cache.put(entry.oid, facts)
        return found


@dataclass(frozen=True, slots=True)
class PreparedTarget:
    """A target after the structural gate, with its files' facts and its type registry."""

    structural: StructuralResult
    facts: dict[str, FileFacts]
    too_large: dict[str, int]
    context: TargetContext
    crds: tuple[tuple[str, CrdFacts], ...]  # (path, CRD) for every CRD the target manages
    registry: TypeRegistry
    catalog_error: str | None


def prepare_target(
    snapshot: Snapshot,
    target: TargetPolicy,
    *,
    max_yaml_bytes: int = DEFAULT_MAX_YAML_BYTES,
    cache: FactsCache | None = None,
) -> PreparedTarget:
    """Everything the content gate and ``ichor-bot types`` start from."""
    reader = _FactsReader(snapshot, cache, RegistryCache())
    return _prepare(snapshot, target, max_yaml_bytes, reader)


def _prepare(
    snapshot: Snapshot, target: TargetPolicy, max_yaml_bytes: int, reader: _FactsReader
) -> PreparedTarget:
    structural = classify_target(snapshot, target)
    report = structural.report
    too_large: dict[str, int] = {}
    wanted: list[Entry] = []
    for path in (*report.build_directives, *report.yaml_files):
        entry = snapshot.get(path)
        assert entry is not None
        if entry.size > max_yaml_bytes:
            too_large[path] = entry.size
        else:
            wanted.append(entry)
    facts = reader.facts(wanted, digests=target.mode == "strict")

    directives = {
        p: k
        for p in report.build_directives
        if p in facts and (k := facts[p].kustomization) is not None
    }
    context = build_context(
        directives,
        {p: facts[p] for p in report.yaml_files if p in facts},
        structural.files,
        lambda p: is_within(p, target.path),
    )
    crds = tuple(
        (path, obj.crd)
        for path in report.yaml_files
        if path in facts and path not in context.context_files
        for _, obj in facts[path].objects
        if obj.crd is not None
    )
    capabilities, catalog_error = _capabilities(snapshot, target)
    registry = reader.registries.get(tuple(crd for _, crd in crds), capabilities)
    return PreparedTarget(structural, facts, too_large, context, crds, registry, catalog_error)


def managed_identities(prepared: PreparedTarget) -> dict[str, tuple[Identity, ...]]:
    """Per managed file, the identities the content gate gives its objects, in file order."""
    found: dict[str, tuple[Identity, ...]] = {}
    namespaces = prepared.context.namespaces
    for path in prepared.structural.report.yaml_files:
        facts = prepared.facts.get(path)
        if facts is None or path in prepared.context.context_files:
            continue
        found[path] = tuple(
            object_identity(
                path,
                obj,
                prepared.registry.resolve(obj.group, obj.version, obj.kind).scope,
                namespaces,
            )
            for _, obj in facts.objects
        )
    return found


class RegistryCache:
    """The type registries built lately, by their sources. Registries are pure functions of
    their sources: a target unchanged since the last check (the common case) reuses its
    registry instead of assessing every type again. Bounded; safe across threads."""

    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._registries: OrderedDict[_RegistryKey, TypeRegistry] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, crds: tuple[CrdFacts, ...], capabilities: Capabilities | None) -> TypeRegistry:
        key = (crds, capabilities)
        with self._lock:
            if (found := self._registries.get(key)) is not None:
                self._registries.move_to_end(key)
                return found
        registry = build_registry(crds=crds, capabilities=capabilities)
        with self._lock:
            self._registries[key] = registry
            while len(self._registries) > self._size:
                self._registries.popitem(last=False)
        return registry


def _check_target(
    snapshot: Snapshot, target: TargetPolicy, policy: GatePolicy, reader: _FactsReader
) -> TargetReport:
    prepared = _prepare(snapshot, target, policy.max_yaml_bytes, reader)
    structural = prepared.structural
    content = check_content(
        ContentInput(
            target=target,
            structural=structural,
            facts=prepared.facts,
            too_large=prepared.too_large,
            context=prepared.context,
            registry=prepared.registry,
            catalog_error=prepared.catalog_error,
            ignored_facts=_ignored_facts(snapshot, structural, policy, reader),
            max_bytes=policy.max_yaml_bytes,
        )
    )
    report = structural.report
    issues = sorted((*content.structural_issues, *content.issues), key=Issue.sort_key)
    return dataclasses.replace(report, issues=tuple(issues), managed=content.managed)


def _capabilities(
    snapshot: Snapshot, target: TargetPolicy
) -> tuple[Capabilities | None, str | None]:
    if target.loaded_capabilities is not None:
        return target.loaded_capabilities, None
    if target.capabilities is None:
        return None, None
    shown = display_path(target.capabilities)
    entry = snapshot.get(target.capabilities)
    if entry is None or entry.kind is not EntryKind.FILE:
        return None, f"the capabilities file {shown} is missing"
    try:
        return parse_capabilities(entry.read()), None
    except CapabilitiesError as exc:
        return None, f"the capabilities file {shown} cannot be read: {exc}"


def _ignored_facts(
    snapshot: Snapshot, structural: StructuralResult, policy: GatePolicy, reader: _FactsReader
) -> dict[str, FileFacts]:
    budget = MAX_IGNORED_SCAN_BYTES
    wanted: list[Entry] = []
    for path in structural.ignored_yaml[:MAX_IGNORED_SCAN_FILES]:
        entry = snapshot.get(path)
        if entry is None or entry.size > policy.max_yaml_bytes or entry.size > budget:
            continue
        budget -= entry.size
        wanted.append(entry)
    return reader.facts(wanted, digests=False)  # a safety scan: nothing is approved there
