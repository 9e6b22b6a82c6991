"""A type's followability record: the verdict, its one-line summary and the ten checks.

The vocabulary (requirements in funnel order, reason codes, verdicts) is the type followability
model of design.md 3.5. Every place that turns a type away uses these codes, so "why
is this not followed?" has one machine-readable answer everywhere.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

NAMESPACED = "Namespaced"
CLUSTER = "Cluster"
SCOPES = (NAMESPACED, CLUSTER)


class Verdict(enum.StrEnum):
    FOLLOWABLE = "followable"
    # A live registry holds a type whose discovery blinked for a short grace period. A
    # repository check has no clock and no previous scan, so it never produces this verdict.
    RETAINED = "retained"
    REFUSED = "refused"
    # No catalog could be read at all (e.g. the capabilities file is unreadable).
    UNKNOWN = "unknown"


class Requirement(enum.StrEnum):
    """The ten requirement checks, declared in funnel order."""

    SERVED = "served"
    TRUSTED = "trusted"
    STABLE = "stable"
    IDENTITY = "identity"
    SCOPE = "scope"
    VERBS = "verbs"
    ORIGIN = "origin"
    POLICY = "policy"
    SENSITIVITY = "sensitivity"
    SCALE = "scale"


REQUIREMENTS: tuple[Requirement, ...] = tuple(Requirement)


class Reason(enum.StrEnum):
    """The single reason code a failed check carries."""

    NOT_SERVED = "not-served"
    SUBRESOURCE_ONLY = "subresource-only"
    DISCOVERY_DEGRADED = "discovery-degraded"
    CATALOG_UNAVAILABLE = "catalog-unavailable"
    ABSENCE_EXPIRED = "absence-expired"
    GVK_NOT_UNIQUE = "gvk-not-unique"
    GVR_NOT_UNIQUE = "gvr-not-unique"
    SCOPE_UNKNOWN = "scope-unknown"
    MISSING_VERB = "missing-verb"
    ORIGIN_UNKNOWN = "origin-unknown"
    DENIED_BY_POLICY = "denied-by-policy"
    SENSITIVE_UNSUPPORTED = "sensitive-unsupported"
    SCALE_PATH_UNRESOLVED = "scale-path-unresolved"


class Origin(enum.StrEnum):
    BUILTIN = "builtin"
    CRD = "crd"
    # Known only from the target's recorded discovery: a CRD not in the repository, or an
    # aggregated API. Either way the cluster serves it, which is all the origin check needs.
    CAPABILITIES = "capabilities"
    # Only on a record synthesized for a type no source serves.
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Check:
    requirement: str
    passed: bool
    reason: str | None = None  # set exactly when the check failed
    detail: str | None = None  # bounded human detail, e.g. the missing verb

    @classmethod
    def ok(cls, requirement: Requirement, detail: str | None = None) -> Check:
        return cls(requirement.value, True, None, detail)

    @classmethod
    def fail(cls, requirement: Requirement, reason: Reason, detail: str | None = None) -> Check:
        return cls(requirement.value, False, reason.value, detail)


@dataclass(frozen=True, slots=True)
class TypeRecord:
    group: str
    version: str
    kind: str
    resource: str | None  # None when no single plural serves the kind
    scope: str | None  # "Namespaced" | "Cluster" | None
    origin: str  # "builtin" | "crd" | "capabilities"
    verdict: Verdict
    summary: str
    # Known types carry all ten requirements in funnel order. A record synthesized for a type
    # nobody serves carries only the checks that could be assessed (see ``bot.registry.assess``).
    checks: tuple[Check, ...]
    sensitive: bool

    @property
    def followable(self) -> bool:
        return self.verdict in (Verdict.FOLLOWABLE, Verdict.RETAINED)

    @property
    def namespaced(self) -> bool:
        return self.scope == NAMESPACED

    @property
    def group_version(self) -> str:
        return gv_string(self.group, self.version)

    @property
    def failing(self) -> Check | None:
        """The first failed check in funnel order: the one that explains the verdict."""
        return next((c for c in self.checks if not c.passed), None)


def gv_string(group: str, version: str) -> str:
    """``apps/v1``; the core group is written as the bare version, as in ``apiVersion``."""
    return f"{group}/{version}" if group else version


def summarize(checks: tuple[Check, ...]) -> str:
    """``followable``, or ``not followable — <reason>[: <detail>]`` from the first failure."""
    for check in checks:
        if not check.passed:
            detail = f": {check.detail}" if check.detail else ""
            return f"not followable — {check.reason}{detail}"
    return "followable"


def verdict_for(checks: tuple[Check, ...]) -> Verdict:
    """The mechanical derivation, without the live-cluster grace (so never ``retained``)."""
    failed = [c for c in checks if not c.passed]
    if not failed:
        return Verdict.FOLLOWABLE
    if any(c.reason == Reason.CATALOG_UNAVAILABLE for c in failed):
        return Verdict.UNKNOWN
    return Verdict.REFUSED
