"""The type registry: every type the sources declare, one followability record per GVK.

Sources: the built-in Kubernetes types (package data), the ``CustomResourceDefinition`` objects
found in the repository, and the target's recorded capabilities. A type declared identically by
several sources is one type. Identity is a bijection across all of them: a kind served under
two plurals in one group/version (``gvk-not-unique``), or a plural serving two kinds
(``gvr-not-unique``), refuses every type involved; the registry never picks one.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from bot.registry.assess import Declaration, assess, unavailable_record, unserved_record
from bot.registry.builtin import (
    BUILTIN_SPEC_REPLICAS_PATH,
    BuiltinType,
    builtin_data,
    builtin_types,
)
from bot.registry.capabilities import Capabilities
from bot.registry.crd import CrdFacts
from bot.registry.followability import Origin, TypeRecord, gv_string
from bot.registry.policy import DEFAULT_POLICY, RegistryPolicy

__all__ = [
    "DEFAULT_POLICY",
    "BuiltinType",
    "RegistryPolicy",
    "TypeRegistry",
    "build_registry",
    "builtin_types",
]

GVK = tuple[str, str, str]
# A CRD serves every verb; the API server adds them all for a custom resource.
CRD_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
CAPABILITIES_SOURCE = "capabilities"
_MAX_HINTS = 4


class TypeRegistry:
    """Lookups over the assessed records; immutable once built."""

    def __init__(
        self,
        records: Iterable[TypeRecord],
        *,
        answers: Mapping[GVK, str] | None = None,
        unserved: Mapping[GVK, str] | None = None,
        catalog_error: str | None = None,
    ) -> None:
        self._records = {(r.group, r.version, r.kind): r for r in records}
        self._sorted = tuple(sorted(self._records.values(), key=_sort_key))
        self._answers = dict(answers or {})
        self._unserved = dict(unserved or {})
        self._catalog_error = catalog_error
        # Where else a kind is served, to point a wrong apiVersion at the right one.
        served_as: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for group, version, kind in self._records:
            served_as[kind].add((group, version))
        self._served_as = {k: sorted(v) for k, v in served_as.items()}

    def records(self) -> tuple[TypeRecord, ...]:
        """Every known type, sorted by (group, kind, version)."""
        return self._sorted

    def followable(self) -> tuple[TypeRecord, ...]:
        return tuple(r for r in self._sorted if r.followable)

    def get(self, group: str, version: str, kind: str) -> TypeRecord | None:
        """The record of a known type, or None."""
        return self._records.get((group, version, kind))

    def resolve(self, group: str, version: str, kind: str) -> TypeRecord:
        """Always a record: the known one, or a synthesized refused (or unknown) one.

        A repository check has the whole catalog in hand, so a type nobody serves is refused
        as ``not-served``; ``unknown`` is only for when a catalog could not be read at all.
        """
        known = self._records.get((group, version, kind))
        if known is not None:
            return known
        via = self._answers.get((group, version, kind))
        if via is not None:
            return unserved_record(group, version, kind, via=via)
        if self._catalog_error is not None:
            return unavailable_record(group, version, kind, self._catalog_error)
        return unserved_record(group, version, kind, note=self._note(group, version, kind))

    def _note(self, group: str, version: str, kind: str) -> str | None:
        notes: list[str] = []
        crd = self._unserved.get((group, version, kind))
        if crd is not None:
            notes.append(f"{crd} declares {version} with served: false")
        elsewhere = self._served_as.get(kind, [])
        same_group = [gv for gv in elsewhere if gv[0] == group]
        shown = [gv_string(g, v) for g, v in (same_group or elsewhere)]
        if shown:
            more = f" and {len(shown) - _MAX_HINTS} more" if len(shown) > _MAX_HINTS else ""
            notes.append(f"{kind} is served as {', '.join(shown[:_MAX_HINTS])}{more}")
        return "; ".join(notes) or None


def build_registry(
    *,
    crds: Sequence[CrdFacts] = (),
    capabilities: Capabilities | None = None,
    policy: RegistryPolicy = DEFAULT_POLICY,
    catalog_error: str | None = None,
) -> TypeRegistry:
    """The registry for one target.

    ``catalog_error`` says a catalog the target relies on (its capabilities file) could not be
    read: types that no readable source knows then resolve as ``unknown``, not ``not-served``.
    """
    decls: list[Declaration] = list(_builtin_declarations())
    unserved: dict[GVK, str] = {}
    for crd in crds:
        decls.extend(_crd_declarations(crd, unserved))
    answers = {(a.group, a.version, a.kind): a.via for a in builtin_data().subresource_kinds}
    if capabilities is not None:
        decls.extend(_capability_declarations(capabilities))
        for a in capabilities.subresource_kinds:
            answers.setdefault((a.group, a.version, a.kind), a.via)
    by_gvk: dict[GVK, list[Declaration]] = defaultdict(list)
    kinds_of: dict[GVK, set[str]] = defaultdict(set)
    for decl in dict.fromkeys(decls):  # an identical declaration twice is one declaration
        by_gvk[(decl.group, decl.version, decl.kind)].append(decl)
        kinds_of[(decl.group, decl.version, decl.resource)].add(decl.kind)
    frozen = {gvr: frozenset(kinds) for gvr, kinds in kinds_of.items()}
    records = [assess(group_decls, frozen, policy) for group_decls in by_gvk.values()]
    for gvk in by_gvk:
        unserved.pop(gvk, None)
    return TypeRegistry(records, answers=answers, unserved=unserved, catalog_error=catalog_error)


@functools.cache
def _builtin_declarations() -> tuple[Declaration, ...]:
    return tuple(
        Declaration(
            group=t.group,
            version=t.version,
            kind=t.kind,
            resource=t.resource,
            scope=t.scope,
            verbs=t.verbs,
            origin=Origin.BUILTIN,
            source=t.source,
            scale=t.serves_scale,
            scale_path=BUILTIN_SPEC_REPLICAS_PATH if t.serves_scale else None,
        )
        for t in builtin_data().types
    )


def _crd_declarations(crd: CrdFacts, unserved: dict[GVK, str]) -> list[Declaration]:
    if not crd.usable:
        return []  # an API server would refuse it, so it serves nothing
    source = f"crd {crd.name}"
    out: list[Declaration] = []
    for version in crd.versions:
        if not version.served:
            unserved.setdefault((crd.group, version.name, crd.kind), source)
            continue
        out.append(
            Declaration(
                group=crd.group,
                version=version.name,
                kind=crd.kind,
                resource=crd.plural,
                scope=crd.scope,
                verbs=CRD_VERBS,
                origin=Origin.CRD,
                source=source,
                scale=version.scale,
                scale_path=version.spec_replicas_path,
            )
        )
    return out


def _capability_declarations(capabilities: Capabilities) -> list[Declaration]:
    return [
        Declaration(
            group=t.group,
            version=t.version,
            kind=t.kind,
            resource=t.resource,
            scope=t.scope,
            verbs=t.verbs,
            origin=Origin.CAPABILITIES,
            source=CAPABILITIES_SOURCE,
            scale="scale" in t.subresources,
            stale=t.stale,
        )
        for t in capabilities.types
    ]


def _sort_key(record: TypeRecord) -> tuple[str, str, str]:
    return record.group, record.kind, record.version
