"""The gate's result types: issues, per-target reports and the whole report."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.gate.codes import CODES, IssueCode, Severity
from bot.gate.content.identity import Identity, identity_text


class Role(enum.StrEnum):
    """The role an entry plays in a target; the keys of the report's ``counts``."""

    MANAGED = "managed"
    BUILD_DIRECTIVE = "build-directive"
    OPERATOR_ARTIFACT = "operator-artifact"
    BENIGN_PASSENGER = "benign-passenger"
    IGNORED = "ignored"
    FOREIGN = "foreign"


class Verdict(enum.StrEnum):
    ACCEPTED = "accepted"
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class Issue:
    kind: IssueCode
    path: str
    message: str
    line: int | None = None
    pattern: str | None = None
    severity: Severity = field(default=Severity.ERROR)
    # What to do about this issue when it is more precise than the code's own fix (a command
    # naming the file, the check a type fails ...); renderers fall back to the code's fix.
    fix: str | None = None
    # What the issue is about when many share it (a type, "batch/v1 Job"): renderers group on it.
    subject: str | None = None

    @classmethod
    def of(
        cls,
        kind: IssueCode,
        path: str,
        message: str,
        *,
        line: int | None = None,
        pattern: str | None = None,
        fix: str | None = None,
        subject: str | None = None,
    ) -> Issue:
        return cls(kind, path, message, line, pattern, CODES[kind].severity, fix, subject)

    @property
    def how_to_fix(self) -> str:
        return self.fix if self.fix is not None else CODES[self.kind].fix

    def sort_key(self) -> tuple[bytes, int, str]:
        raw = self.path.encode("utf-8", "surrogateescape")
        return (raw, -1 if self.line is None else self.line, self.kind.value)


@dataclass(frozen=True, slots=True)
class ConfigIssue:
    """A problem with ``.ichor.yaml``: a stable ``kind`` and a message naming key and value."""

    kind: str
    message: str
    path: str = ".ichor.yaml"
    line: int | None = None  # 1-based, where the problem is in the file, when known


def empty_counts() -> dict[Role, int]:
    return dict.fromkeys(Role, 0)


@dataclass(frozen=True, slots=True)
class ManagedObject:
    """An object the gate read as managed (the first of its identity, in path order): where
    it is and the digest of its document, what approvals of strict targets are given for."""

    identity: Identity
    path: str
    line: int
    digest: str  # SHA-256 hex of the document's canonical JSON (bot.gate.content.digest)

    @property
    def shown(self) -> str:
        """The identity as people and approvals read it (:func:`identity_text`)."""
        return identity_text(self.identity)


@dataclass(frozen=True, slots=True)
class TargetReport:
    name: str
    path: str
    issues: tuple[Issue, ...]
    counts: Mapping[Role, int]
    # Inputs for the content gate: YAML files in the managed role, and build directives.
    yaml_files: tuple[str, ...] = ()
    build_directives: tuple[str, ...] = ()
    # What the content gate read as managed objects, in path and document order. No renderer
    # shows them (the reports keep their shape); approvals of strict targets read them.
    managed: tuple[ManagedObject, ...] = ()

    @property
    def verdict(self) -> Verdict:
        refused = any(i.severity is Severity.ERROR for i in self.issues)
        return Verdict.REFUSED if refused else Verdict.ACCEPTED


@dataclass(frozen=True, slots=True)
class Report:
    revision: str | None
    config_issues: tuple[ConfigIssue, ...] = ()
    targets: tuple[TargetReport, ...] = ()

    @property
    def accepted(self) -> bool:
        return not self.config_issues and all(t.verdict is Verdict.ACCEPTED for t in self.targets)

    @property
    def exit_code(self) -> int:
        """0 every target accepted, 1 a target refused, 2 a configuration error."""
        if self.config_issues:
            return 2
        return 0 if self.accepted else 1
