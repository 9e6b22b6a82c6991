"""What a capabilities suggestion starts from, read from a snapshot (``types --suggest``).

``bot.registry.suggest`` writes the file from values; this reads those values the way the gate
reads the target: the types of the objects the content gate checks (the managed YAML files,
not the context files a kustomization or a HelmRelease only refers to, not an object whose
identity is encrypted), the CRDs the target's registry already holds, and every CRD anywhere
in the repository. Reading the repository is bounded like onboarding's detection: files over
the gate's size limit are skipped, and at most :data:`MAX_BYTES_READ` bytes are read, in path
order. Pure apart from the snapshot's own readers, like the gate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from bot.gate.content.facts import extract_facts
from bot.gate.policy import DEFAULT_MAX_YAML_BYTES, TargetPolicy
from bot.gate.run import prepare_target
from bot.gate.structural import YAML_SUFFIXES
from bot.git.snapshot import Entry, EntryKind, Snapshot
from bot.paths import display_path
from bot.registry.capabilities import Capabilities
from bot.registry.catalog import CrdCatalog
from bot.registry.crd import CRD_KIND, CrdFacts
from bot.registry.suggest import GVK, Suggestion, suggest_capabilities

MAX_BYTES_READ: Final = 64 << 20
_READ_BATCH: Final = 256
_CRD_MARKER: Final = CRD_KIND.encode()


@dataclass(frozen=True, slots=True)
class SuggestionInput:
    used: tuple[GVK, ...]  # sorted, each once
    target_crds: tuple[CrdFacts, ...]
    repository_crds: tuple[tuple[str, CrdFacts], ...]  # (path, CRD), in path order


def suggestion_input(
    snapshot: Snapshot,
    target: TargetPolicy,
    *,
    max_yaml_bytes: int = DEFAULT_MAX_YAML_BYTES,
    repository: tuple[tuple[str, CrdFacts], ...] | None = None,
) -> SuggestionInput:
    prepared = prepare_target(snapshot, target, max_yaml_bytes=max_yaml_bytes)
    used: set[GVK] = set()
    for path in prepared.structural.report.yaml_files:
        facts = prepared.facts.get(path)
        if facts is None or path in prepared.context.context_files:
            continue
        for _, obj in facts.objects:
            if not obj.identity_encrypted:
                used.add((obj.group, obj.version, obj.kind))
    return SuggestionInput(
        used=tuple(sorted(used)),
        target_crds=tuple(crd for _, crd in prepared.crds),
        repository_crds=(
            repository
            if repository is not None
            else repository_crds(snapshot, max_yaml_bytes=max_yaml_bytes)
        ),
    )


def repository_crds(
    snapshot: Snapshot, *, max_yaml_bytes: int = DEFAULT_MAX_YAML_BYTES
) -> tuple[tuple[str, CrdFacts], ...]:
    """Every ``CustomResourceDefinition`` in the repository's YAML files, with its path."""
    wanted: list[Entry] = []
    budget = MAX_BYTES_READ
    for entry in snapshot:
        if entry.kind is not EntryKind.FILE or not entry.path.endswith(YAML_SUFFIXES):
            continue
        if entry.size > max_yaml_bytes or entry.size > budget:
            continue
        budget -= entry.size
        wanted.append(entry)
    found: list[tuple[str, CrdFacts]] = []
    for start in range(0, len(wanted), _READ_BATCH):
        chunk = wanted[start : start + _READ_BATCH]
        for entry, data in zip(chunk, snapshot.read_many(chunk), strict=True):
            if _CRD_MARKER not in data:
                continue  # most files: skip the parse
            for _, obj in extract_facts(data).objects:
                if obj.crd is not None:
                    found.append((entry.path, obj.crd))
    return tuple(found)


def suggest_for_target(
    snapshot: Snapshot,
    target: TargetPolicy,
    *,
    catalog: CrdCatalog,
    recorded: Capabilities | None = None,
    recorded_name: str = "the recorded API resources",
    max_yaml_bytes: int = DEFAULT_MAX_YAML_BYTES,
    repository: tuple[tuple[str, CrdFacts], ...] | None = None,
) -> Suggestion:
    """The capabilities file ``target`` needs (``bot.registry.suggest.suggest_capabilities``).

    The target's own capabilities file is not read: pass it as ``recorded`` to keep what it
    says for the types the target uses. ``repository`` is :func:`repository_crds`, when a
    caller suggesting for several targets has read it once.
    """
    found = suggestion_input(snapshot, target, max_yaml_bytes=max_yaml_bytes, repository=repository)
    return suggest_capabilities(
        found.used,
        catalog=catalog,
        target_crds=found.target_crds,
        repository_crds=found.repository_crds,
        recorded=recorded,
        recorded_name=recorded_name,
        target=display_path(target.path) if target.path else ".",
    )
