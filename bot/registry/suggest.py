"""The capabilities file a target needs, written for a person to review (design.md 3.5).

The bot has no cluster, so a type that neither Kubernetes itself nor a CRD in the target
declares is ``not-served`` until the target's capabilities file lists it. This writes that
file: one entry for each type the target's objects use that needs one, each taken from the
first source that knows the type, and every source named beside its entries:

1. a recording of the cluster (``kubectl api-resources -o wide`` or a discovery document):
   what the cluster really serves, so where it knows the kind its word is final;
2. a ``CustomResourceDefinition`` anywhere in the repository (outside the target too): what
   the repository installs, so where one defines the kind, it decides the versions;
3. the catalog of well-known CRD types (``bot.registry.catalog``).

A type none of them serves at the object's version is listed as not found, with why; nothing
is guessed. The entries only become the registry's when a person commits the file, which is
why the catalog never makes a type followable by itself.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.registry.capabilities import Capabilities, parse_capabilities
from bot.registry.catalog import CatalogProject, CrdCatalog
from bot.registry.crd import CrdFacts
from bot.registry.discovery import ServedType
from bot.registry.followability import NAMESPACED, gv_string
from bot.registry.registry import CRD_VERBS, build_registry

GVK = tuple[str, str, str]
COLUMNS = ("NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS")
_GAP = "   "  # kubectl's tab writer pads columns by three spaces


class Origin(enum.StrEnum):
    RECORDED = "recorded"
    REPOSITORY = "repository"
    CATALOG = "catalog"
    NOT_FOUND = "not-found"


@dataclass(frozen=True, slots=True)
class SuggestedType:
    """One type that needs an entry, and where the entry came from (or why there is none)."""

    group: str
    version: str
    kind: str
    origin: Origin
    source: str  # "catalog: fluxcd/helm-controller@v1.6.1 (Apache-2.0)", "not found" ...
    entry: ServedType | None = None
    note: str | None = None  # why not found, when a source knows the kind at other versions
    project: CatalogProject | None = None  # for a catalog entry
    summary: str | None = None  # the registry's verdict once the file is in place

    @property
    def name(self) -> str:
        return f"{gv_string(self.group, self.version)} {self.kind}"

    @property
    def found(self) -> bool:
        return self.entry is not None


@dataclass(frozen=True, slots=True)
class Suggestion:
    text: str  # the capabilities file, a `kubectl api-resources -o wide` table with comments
    types: tuple[SuggestedType, ...]  # every type that needs an entry, sorted

    @property
    def written(self) -> tuple[SuggestedType, ...]:
        return tuple(t for t in self.types if t.found)

    @property
    def missing(self) -> tuple[SuggestedType, ...]:
        return tuple(t for t in self.types if not t.found)


def suggest_capabilities(
    used: Iterable[GVK],
    *,
    catalog: CrdCatalog,
    target_crds: Sequence[CrdFacts] = (),
    repository_crds: Sequence[tuple[str, CrdFacts]] = (),
    recorded: Capabilities | None = None,
    recorded_name: str = "the recorded API resources",
    target: str = ".",
) -> Suggestion:
    """The capabilities file for a target whose objects use the types ``used``.

    ``target_crds`` are the CRDs the gate already reads from the target (their types need no
    entry), ``repository_crds`` every CRD in the repository with its path, ``recorded`` a
    recording of the cluster named ``recorded_name``; ``target`` is shown in the heading.
    """
    known = build_registry(crds=target_crds)
    needed = sorted({gvk for gvk in used if known.get(*gvk) is None})
    crds_by_kind: dict[tuple[str, str], list[tuple[str, CrdFacts]]] = {}
    for path, crd in sorted(repository_crds, key=lambda item: item[0]):
        if crd.usable and crd.scope is not None:
            crds_by_kind.setdefault((crd.group, crd.kind), []).append((path, crd))
    found = [_find(gvk, catalog, crds_by_kind, recorded, recorded_name) for gvk in needed]
    text = _render(found, target)
    # Read the file back as the gate will, and say what each type's verdict becomes.
    registry = build_registry(crds=target_crds, capabilities=parse_capabilities(text.encode()))
    checked = tuple(
        _with_summary(t, registry.resolve(t.group, t.version, t.kind).summary) for t in found
    )
    return Suggestion(text, checked)


def _with_summary(t: SuggestedType, summary: str) -> SuggestedType:
    if not t.found:
        return t
    return SuggestedType(
        t.group, t.version, t.kind, t.origin, t.source, t.entry, t.note, t.project, summary
    )


def _find(
    gvk: GVK,
    catalog: CrdCatalog,
    crds_by_kind: dict[tuple[str, str], list[tuple[str, CrdFacts]]],
    recorded: Capabilities | None,
    recorded_name: str,
) -> SuggestedType:
    group, version, kind = gvk
    if recorded is not None:
        same_kind = [t for t in recorded.types if (t.group, t.kind) == (group, kind)]
        exact = [t for t in same_kind if t.version == version and t.scope is not None]
        if exact:
            return SuggestedType(*gvk, Origin.RECORDED, recorded_name, entry=exact[0])
        if same_kind:
            versions = ", ".join(sorted({t.version for t in same_kind}))
            note = f"{recorded_name} serves {kind} as {versions} only"
            return SuggestedType(*gvk, Origin.NOT_FOUND, "not found", note=note)
    defined = crds_by_kind.get((group, kind), [])
    for path, crd in defined:
        if any(v.name == version and v.served for v in crd.versions):
            source = f"CustomResourceDefinition {crd.name} at {path}"
            entry = _crd_entry(gvk, crd.plural, crd.scope or NAMESPACED)
            return SuggestedType(*gvk, Origin.REPOSITORY, source, entry=entry)
    if defined:
        path, crd = defined[0]
        served = ", ".join(v.name for v in crd.versions if v.served) or "no version"
        more = f" (and {len(defined) - 1} more)" if len(defined) > 1 else ""
        note = f"the repository's CRD {crd.name} at {path}{more} serves {served}, not {version}"
        return SuggestedType(*gvk, Origin.NOT_FOUND, "not found", note=note)
    listed = catalog.find(group, kind)
    if listed is not None:
        project = catalog.project(listed.project)
        if listed.serves(version):
            source = f"catalog: {project.label} ({project.license})"
            entry = _crd_entry(gvk, listed.plural, listed.scope)
            return SuggestedType(*gvk, Origin.CATALOG, source, entry=entry, project=project)
        served = ", ".join(listed.served_versions()) or "no version"
        note = f"the catalog's {project.label} serves {kind} as {served}, not {version}"
        return SuggestedType(*gvk, Origin.NOT_FOUND, "not found", note=note, project=project)
    return SuggestedType(*gvk, Origin.NOT_FOUND, "not found")


def _crd_entry(gvk: GVK, plural: str, scope: str) -> ServedType:
    group, version, kind = gvk
    return ServedType(group, version, kind, plural, scope, CRD_VERBS, ())


def _render(types: Sequence[SuggestedType], target: str) -> str:
    lines = [
        f"# The capabilities file of the target {target}, written by `ichor-bot types --suggest`:",
        "# the API types its objects use that neither Kubernetes nor a CustomResourceDefinition",
        "# in the target declares, as `kubectl api-resources -o wide` prints them.",
        "# Review each entry: it tells Ichor Bot that the cluster serves the type. A recording",
        "# of the cluster itself (`kubectl api-resources -o wide`) may replace this file.",
    ]
    missing = [t for t in types if not t.found]
    if missing:
        lines.append("#")
        lines.append("# Not found, so not listed (record them from the cluster, or add their CRD):")
        lines.extend(f"#   {t.name}" + (f": {t.note}" if t.note else "") for t in missing)
    if not types:
        lines.append("#")
        lines.append("# Every type the target's objects use is known without this file.")
    written = sorted(
        (t for t in types if t.entry is not None),
        key=lambda t: (list(Origin).index(t.origin), t.source, t.group, t.kind, t.version),
    )
    rows = [COLUMNS, *(_row(t.entry) for t in written if t.entry is not None)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]

    def line(row: Sequence[str]) -> str:
        return _GAP.join(
            cell.ljust(width) for cell, width in zip(row, widths, strict=True)
        ).rstrip()

    lines.append(line(COLUMNS))
    source = None
    for t, row in zip(written, rows[1:], strict=True):
        if t.source != source:
            source = t.source
            lines.append(f"# from {source}")
        lines.append(line(row))
    return "\n".join(lines) + "\n"


def _row(entry: ServedType) -> tuple[str, str, str, str, str, str]:
    namespaced = "true" if entry.scope == NAMESPACED else "false"
    api_version = gv_string(entry.group, entry.version)
    return (entry.resource, "", api_version, namespaced, entry.kind, ",".join(entry.verbs))
