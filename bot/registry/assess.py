"""The ten requirement checks: what the sources declare about a type, turned into its record.

A repository check has no live cluster. A type some source declares is therefore "served",
"trusted" and "stable" by construction (the one exception: recorded aggregated discovery that
marks its group/version ``Stale``), and the verdict is never ``retained``, which needs a clock
and a previous scan. Every check is evaluated, so a record shows all ten; the summary names
the first failure in funnel order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.registry.followability import (
    Check,
    Origin,
    Reason,
    Requirement,
    TypeRecord,
    Verdict,
    gv_string,
    summarize,
    verdict_for,
)
from bot.registry.policy import RegistryPolicy

# Mirroring is a read path: get, list and watch are enough; patch is not required.
REQUIRED_VERBS = ("get", "list", "watch")
_ORIGIN_ORDER = (Origin.BUILTIN, Origin.CRD, Origin.CAPABILITIES)
# The capabilities file is a recording of the target's own cluster, so what it says a type
# serves beats what a CRD or the built-in table says.
_VERB_ORDER = (Origin.CAPABILITIES, Origin.CRD, Origin.BUILTIN)


@dataclass(frozen=True, slots=True)
class Declaration:
    """One source's statement that it serves a type under one plural."""

    group: str
    version: str
    kind: str
    resource: str
    scope: str | None
    verbs: tuple[str, ...]
    origin: Origin
    source: str  # "discovery-1.33", "crd widgets.example.com", "capabilities" ...
    scale: bool = False  # serves /scale
    scale_path: str | None = None  # the parent's replica field, when known (not guessed)
    stale: bool = False


def assess(
    decls: Sequence[Declaration],
    kinds_of: Mapping[tuple[str, str, str], frozenset[str]],
    policy: RegistryPolicy,
) -> TypeRecord:
    """The record of one group/version/kind from every declaration of it (at least one).

    ``kinds_of`` maps every declared (group, version, resource) to the kinds it serves, across
    all sources: the reverse direction of the identity check.
    """
    first = decls[0]
    group, version, kind = first.group, first.version, first.kind
    resources = tuple(sorted({d.resource for d in decls}))
    scopes = {d.scope for d in decls if d.scope is not None}
    sensitive = any(policy.is_sensitive(group, r) for r in resources)
    checks = (
        Check.ok(Requirement.SERVED),
        _trusted(decls),
        Check.ok(Requirement.STABLE),
        _identity(group, version, resources, kinds_of),
        _scope(decls, scopes),
        _verbs(decls),
        Check.ok(Requirement.ORIGIN),
        _policy(group, resources, policy),
        # Sensitive types have supported handling: they must be stored SOPS-encrypted, which
        # the gate enforces on every object (plaintext-secret). So sensitivity never refuses.
        Check.ok(Requirement.SENSITIVITY, "stored SOPS-encrypted" if sensitive else None),
        _scale(decls),
    )
    return TypeRecord(
        group=group,
        version=version,
        kind=kind,
        resource=resources[0] if len(resources) == 1 else None,
        scope=next(iter(scopes)) if len(scopes) == 1 else None,
        origin=next(o for o in _ORIGIN_ORDER if any(d.origin is o for d in decls)).value,
        verdict=verdict_for(checks),
        summary=summarize(checks),
        checks=checks,
        sensitive=sensitive,
    )


def unserved_record(
    group: str, version: str, kind: str, *, via: str | None = None, note: str | None = None
) -> TypeRecord:
    """A type nobody serves (or serves only as a subresource's answer, ``via``).

    Nothing after ``served`` can be assessed without a served resource, so the record carries
    that one check. ``note`` adds what is known nearby (e.g. the versions that are served).
    """
    shown = f"{gv_string(group, version)} {kind}"
    if via is not None:
        detail = f"{shown} is served only as a subresource: {_bounded(via)}"
        check = Check.fail(Requirement.SERVED, Reason.SUBRESOURCE_ONLY, detail)
    else:
        detail = f"{shown} is not served by any source" + (f" ({note})" if note else "")
        check = Check.fail(Requirement.SERVED, Reason.NOT_SERVED, detail)
    return _synthesized(group, version, kind, check)


def unavailable_record(group: str, version: str, kind: str, detail: str) -> TypeRecord:
    """A type the registry cannot assess because the catalog could not be read.

    Whether it is served is unknown, so the record carries only the failed ``trusted`` check.
    """
    check = Check.fail(Requirement.TRUSTED, Reason.CATALOG_UNAVAILABLE, detail)
    record = _synthesized(group, version, kind, check)
    assert record.verdict is Verdict.UNKNOWN
    return record


def _synthesized(group: str, version: str, kind: str, check: Check) -> TypeRecord:
    checks = (check,)
    return TypeRecord(
        group=group,
        version=version,
        kind=kind,
        resource=None,
        scope=None,
        origin=Origin.UNKNOWN.value,
        verdict=verdict_for(checks),
        summary=summarize(checks),
        checks=checks,
        sensitive=False,
    )


def _bounded(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip(", ") + "..."


def _trusted(decls: Sequence[Declaration]) -> Check:
    if all(d.stale for d in decls):
        gv = gv_string(decls[0].group, decls[0].version)
        return Check.fail(
            Requirement.TRUSTED,
            Reason.DISCOVERY_DEGRADED,
            f"the recorded discovery marks {gv} as Stale",
        )
    return Check.ok(Requirement.TRUSTED)


def _identity(
    group: str,
    version: str,
    resources: tuple[str, ...],
    kinds_of: Mapping[tuple[str, str, str], frozenset[str]],
) -> Check:
    if len(resources) > 1:
        return Check.fail(Requirement.IDENTITY, Reason.GVK_NOT_UNIQUE, ", ".join(resources))
    kinds = kinds_of.get((group, version, resources[0]), frozenset())
    if len(kinds) > 1:
        return Check.fail(Requirement.IDENTITY, Reason.GVR_NOT_UNIQUE, ", ".join(sorted(kinds)))
    return Check.ok(Requirement.IDENTITY)


def _scope(decls: Sequence[Declaration], scopes: set[str]) -> Check:
    if len(scopes) == 1:
        return Check.ok(Requirement.SCOPE)
    if not scopes:
        return Check.fail(Requirement.SCOPE, Reason.SCOPE_UNKNOWN, "no source states the scope")
    stated = sorted({f"{d.scope} ({d.source})" for d in decls if d.scope is not None})
    return Check.fail(
        Requirement.SCOPE, Reason.SCOPE_UNKNOWN, "sources disagree: " + ", ".join(stated)
    )


def _verbs(decls: Sequence[Declaration]) -> Check:
    origin = next(o for o in _VERB_ORDER if any(d.origin is o for d in decls))
    verbs = {v for d in decls if d.origin is origin for v in d.verbs}
    missing = [v for v in REQUIRED_VERBS if v not in verbs]
    if missing:
        return Check.fail(Requirement.VERBS, Reason.MISSING_VERB, ", ".join(missing))
    return Check.ok(Requirement.VERBS)


def _policy(group: str, resources: tuple[str, ...], policy: RegistryPolicy) -> Check:
    if any(policy.is_denied(group, r) for r in resources):
        return Check.fail(Requirement.POLICY, Reason.DENIED_BY_POLICY)
    return Check.ok(Requirement.POLICY)


def _scale(decls: Sequence[Declaration]) -> Check:
    serving = [d for d in decls if d.scale]
    if not serving:
        return Check.ok(Requirement.SCALE)  # no /scale: nothing to bind
    paths = sorted({d.scale_path for d in decls if d.scale_path is not None})
    if len(paths) == 1:
        return Check.ok(Requirement.SCALE, paths[0])
    if paths:
        # Two known paths is no known path: picking one would be a guess.
        detail = "sources disagree on the replica path: " + ", ".join(paths)
        return Check.fail(Requirement.SCALE, Reason.SCALE_PATH_UNRESOLVED, detail)
    crds = [d.source for d in serving if d.origin is Origin.CRD]
    if crds:
        detail = f"{crds[0]} serves /scale without a usable specReplicasPath"
    else:
        detail = "/scale is served but no source gives the replica path it changes"
    return Check.fail(Requirement.SCALE, Reason.SCALE_PATH_UNRESOLVED, detail)
