"""What the status page keeps of a check beside what the forge received: the check's facts as
values (its branch, each target's verdict, every issue marked new or already on base, the
objects waiting for ``/approve``) and the job that posted it (design.md 7).

The forge's summary says all of this as markdown; the page needs it as data, to put new issues
first, link each to its file and line, and sum a repository up. Read back from stored JSON, so
every field is clipped and a record that does not parse is dropped, never shown half.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FINDING_LIMIT = 500  # issues past this many are counted only
WAITING_LIMIT = 100
TEXT_LIMIT = 2_000


def clip(value: object, limit: int = TEXT_LIMIT) -> str:
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _optional_int(value: object) -> int | None:
    return None if value is None else int(str(value))


@dataclass(frozen=True, slots=True)
class TargetLine:
    """One touched target: its verdict at head and at base, and its issues by kind."""

    name: str
    path: str
    verdict: str  # accepted, refused
    base_verdict: str | None  # None: the target has no report at base
    new: int
    existing: int
    blocking: bool  # it fails the check (enforce: new weighs only what the change introduced)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TargetLine:
        base = data.get("base_verdict")
        return cls(
            clip(data["name"], 200),
            clip(data["path"]),
            clip(data["verdict"], 40),
            None if base is None else clip(base, 40),
            int(data["new"]),
            int(data["existing"]),
            bool(data["blocking"]),
        )


@dataclass(frozen=True, slots=True)
class Finding:
    """One issue of one target: new (the change introduced it) or already on base."""

    target: str
    path: str
    line: int | None
    severity: str  # error, warning
    code: str
    message: str
    new: bool

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        return cls(
            clip(data["target"], 200),
            clip(data["path"]),
            _optional_int(data.get("line")),
            clip(data["severity"], 40),
            clip(data["code"], 100),
            clip(data["message"], 4_000),
            bool(data["new"]),
        )


@dataclass(frozen=True, slots=True)
class Waiting:
    """A strict target's new object that waits for ``/approve``."""

    target: str
    identity: str  # as the check shows it: kind, namespace and name
    path: str

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Waiting:
        return cls(clip(data["target"], 200), clip(data["identity"]), clip(data["path"]))


@dataclass(frozen=True, slots=True)
class CheckFacts:
    """A check's facts as values. ``findings`` holds new issues first, then those on base, at
    most :data:`FINDING_LIMIT`; ``finding_count`` counts them all."""

    branch: str | None = None  # the pull request's head branch, or the branch pushed
    targets: tuple[TargetLine, ...] = ()
    findings: tuple[Finding, ...] = ()
    finding_count: int = 0
    waiting: tuple[Waiting, ...] = ()
    approved: int = 0  # the strict targets' new objects already approved

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckFacts:
        branch = data.get("branch")
        findings = tuple(
            Finding.from_dict(f) for f in list(data.get("findings") or [])[:FINDING_LIMIT]
        )
        return cls(
            None if branch is None else clip(branch, 400),
            tuple(TargetLine.from_dict(t) for t in list(data.get("targets") or [])[:200]),
            findings,
            int(data.get("finding_count", len(findings))),
            tuple(Waiting.from_dict(w) for w in list(data.get("waiting") or [])[:WAITING_LIMIT]),
            int(data.get("approved", 0)),
        )


@dataclass(frozen=True, slots=True)
class JobRun:
    """The job that posted a check: the forge its delivery came from (which may differ from
    the adapter that received the result: ``make run`` posts GitHub deliveries to the
    ``local`` forge), its id, and when it started."""

    forge: str
    job_id: str
    started_at: float
