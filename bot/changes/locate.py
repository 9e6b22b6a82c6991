"""Finding the object a command names (design.md 5, 6): by identity, in the gate's report of the
base branch, in the one target that holds it or the one named with ``in <target>``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.gate.report import ManagedObject, Report


@dataclass(frozen=True, slots=True)
class Located:
    target: str
    object: ManagedObject


@dataclass(frozen=True, slots=True)
class NotLocated:
    """Why the object could not be chosen; a usage error for the reply."""

    message: str


def kind_matches(wanted: str, group: str, kind: str) -> bool:
    """``Deployment`` names the kind in any group; ``Deployment.apps`` one group."""
    name, _, wanted_group = wanted.partition(".")
    return name == kind and (not wanted_group or wanted_group == group)


def locate(
    report: Report,
    *,
    kind: str,
    namespace: str | None,
    name: str,
    target: str | None,
    targets: Sequence[str] | None = None,
) -> Located | NotLocated:
    """The managed object of ``kind`` ``namespace/name`` (None: cluster-scoped); ``targets``
    limits the search (e.g. to the targets whose approval kind this is)."""
    found: list[Located] = []
    for report_target in report.targets:
        if target is not None and report_target.name != target:
            continue
        if targets is not None and report_target.name not in targets:
            continue
        for obj in report_target.managed:
            group, obj_kind, obj_namespace, obj_name = obj.identity
            if (
                kind_matches(kind, group, obj_kind)
                and (obj_namespace or None) == namespace
                and obj_name == name
            ):
                found.append(Located(report_target.name, obj))
    shown = f"{kind} {namespace or '_'}/{name}"
    if not found:
        where = f" in target {target}" if target else ""
        return NotLocated(f"no managed {shown}{where} on the base branch")
    if len(found) > 1:
        names = ", ".join(sorted({f.target for f in found}))
        if len({f.target for f in found}) > 1:
            return NotLocated(f"{shown} is in several targets ({names}): add `in <target>`")
        return NotLocated(f"{shown} matches several objects in {names}: name its group too")
    return found[0]
