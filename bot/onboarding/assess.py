"""What the gate would say of a folder as a target, for choosing targets (design.md 6.6). Pure.

The onboarding body gives a fix for every issue code, and most of them work as written: ignore
a file, encrypt a Secret, render a kustomization, record a type. A few do not, and a folder
with one of these is not proposed as it is (:mod:`bot.onboarding.detect` tries what is below
it instead):

- **a kustomization that reaches outside the folder** (a resource or patch outside it, or a
  remote base): the target would be refused at once, and moving the base in is a
  restructuring, not a fix;
- **objects named with substitution variables** (``${APP}``, filled in by Flux's
  ``postBuild``): a template, not objects a cluster holds, and renaming them would break it;
- **a kustomize Component no kustomization of the folder lists**: built only inside the
  kustomizations that list it, elsewhere;
- at the repository root, **types no source serves**: a root target can keep no capabilities
  file outside itself.

Duplicate identities are fixable (remove or ignore one copy) unless folders side by side define
the same objects; that is two environments, split in :mod:`bot.onboarding.environments` from
the identities gathered here.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from bot.gate.content.cache import FactsCache
from bot.gate.content.identity import Identity
from bot.gate.policy import DEFAULT_MAX_YAML_BYTES, TargetPolicy
from bot.gate.run import PreparedTarget, managed_identities, prepare_target
from bot.git.snapshot import Snapshot
from bot.paths import relative_to
from bot.registry.followability import Reason

_SUBSTITUTION: Final = "${"
_OUTSIDE: Final = {
    "resource-outside-target": "lists a resource outside the folder",
    "patch-outside-target": "lists a patch outside the folder",
    "remote-base": "builds a remote base",
}


@dataclass(frozen=True, slots=True)
class Blocker:
    """Why a folder is not proposed as it is: ``reason`` is ours, ``where`` the file."""

    reason: str
    where: str


@dataclass(frozen=True, slots=True)
class Assessment:
    path: str
    blockers: tuple[Blocker, ...]
    # The identities of the managed objects under each direct child folder ("" for the files
    # at the folder's own top), as the folder's own kustomizations give them their namespaces.
    identities: Mapping[str, frozenset[Identity]]

    @property
    def whole(self) -> bool:
        """Whether a blocker is in the folder's own files: the folder is one build (a Component,
        a kustomization reaching out), so the folders below it are its pieces, not targets."""
        return any(posixpath.dirname(b.where) == self.path for b in self.blockers)


def assess(
    snapshot: Snapshot,
    path: str,
    *,
    cache: FactsCache | None = None,
    max_yaml_bytes: int = DEFAULT_MAX_YAML_BYTES,
) -> Assessment:
    prepared = prepare_target(
        snapshot, TargetPolicy("candidate", path), max_yaml_bytes=max_yaml_bytes, cache=cache
    )
    blockers = [*_component(prepared), *_outside(prepared), *_templates(prepared)]
    if path == "":
        blockers += _unserved(prepared)
    identities: dict[str, set[Identity]] = defaultdict(set)
    for file, found in managed_identities(prepared).items():
        rel = relative_to(file, path)
        child = rel.partition("/")[0] if "/" in rel else ""
        identities[child].update(found)
    return Assessment(path, tuple(blockers), {k: frozenset(v) for k, v in identities.items()})


def _outside(prepared: PreparedTarget) -> list[Blocker]:
    found: dict[str, list[str]] = defaultdict(list)
    for kustomization, feature in prepared.context.outside:
        found[kustomization].append(_OUTSIDE[feature])
    for path in prepared.structural.report.build_directives:
        facts = prepared.facts.get(path)
        kust = facts.kustomization if facts is not None else None
        if kust is not None and "remote-base" in kust.features:
            found[path].append(_OUTSIDE["remote-base"])
    return [
        Blocker(f"its kustomization {' and '.join(sorted(set(what)))}", path)
        for path, what in sorted(found.items())
    ]


def _component(prepared: PreparedTarget) -> list[Blocker]:
    """A Component no kustomization of the folder may list (none uses ``components``): built
    elsewhere or not at all. One that may be listed is built, and rendered, with its user."""
    components: list[str] = []
    for path in prepared.structural.report.build_directives:
        facts = prepared.facts.get(path)
        kust = facts.kustomization if facts is not None else None
        if kust is None:
            continue
        if "components" in kust.features:
            return []
        if "component" in kust.features:
            components.append(path)
    return [
        Blocker(
            "it is a kustomize Component, built only inside the kustomizations that list it",
            path,
        )
        for path in components[:1]
    ]


def _templates(prepared: PreparedTarget) -> list[Blocker]:
    """The first file whose objects are named with substitution variables."""
    for path in prepared.structural.report.yaml_files:
        facts = prepared.facts.get(path)
        if facts is None or path in prepared.context.context_files:
            continue
        for _, obj in facts.objects:
            if _SUBSTITUTION in obj.name or _SUBSTITUTION in (obj.namespace or ""):
                return [
                    Blocker(
                        "objects named with substitution variables (${...}): a template "
                        "filled in at deploy time, not objects a cluster holds",
                        path,
                    )
                ]
    return []


def _unserved(prepared: PreparedTarget) -> list[Blocker]:
    """At the root: a type nothing serves, the first file using one."""
    for path in prepared.structural.report.yaml_files:
        facts = prepared.facts.get(path)
        if facts is None or path in prepared.context.context_files:
            continue
        for _, obj in facts.objects:
            record = prepared.registry.resolve(obj.group, obj.version, obj.kind)
            failing = record.failing
            if failing is not None and failing.reason == Reason.NOT_SERVED:
                return [
                    Blocker(
                        "types no Kubernetes release or CRD in it serves, which only a "
                        "capabilities file outside the target could record, and a target at "
                        "the root has no outside",
                        path,
                    )
                ]
    return []
