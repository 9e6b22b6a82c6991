"""What a comment's command lines become: one typed value per command, and the problems.

Every command carries ``line``, its 1-based line number in the comment (CRLF and lone CR
counted as one line break), so a reply or an audit record can point at it. ``namespace`` is
None for a cluster-scoped object (written ``_`` in the comment).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, TypeAlias

Verb: TypeAlias = Literal["help", "recheck", "approve", "reject", "delete", "ignore"]
VERBS: tuple[Verb, ...] = ("help", "recheck", "approve", "reject", "delete", "ignore")

# At most this many command lines of one comment are read (design.md 5).
MAX_COMMANDS = 10


@dataclass(frozen=True, slots=True)
class Help:
    """``/help``, ``/ichor help`` or ``/ichor`` alone."""

    verb: ClassVar[Verb] = "help"
    line: int


@dataclass(frozen=True, slots=True)
class Recheck:
    verb: ClassVar[Verb] = "recheck"
    line: int


@dataclass(frozen=True, slots=True)
class ApproveHead:
    """``/approve`` alone: the new managed objects of strict targets at the current head."""

    verb: ClassVar[Verb] = "approve"
    line: int


@dataclass(frozen=True, slots=True)
class ApproveCancel:
    verb: ClassVar[Verb] = "approve"
    line: int


@dataclass(frozen=True, slots=True)
class ApproveObject:
    """``/approve <ns>/<name> [field=value …] [in <target>]``; ``fields`` in the order given."""

    verb: ClassVar[Verb] = "approve"
    line: int
    namespace: str | None
    name: str
    fields: tuple[tuple[str, str], ...]
    target: str | None


@dataclass(frozen=True, slots=True)
class RejectObject:
    """``/reject <ns>/<name> [reason …] [in <target>]``; ``reason`` is "" when none is given."""

    verb: ClassVar[Verb] = "reject"
    line: int
    namespace: str | None
    name: str
    reason: str
    target: str | None


@dataclass(frozen=True, slots=True)
class DeleteObject:
    """``/delete <kind> <ns>/<name> [in <target>]``; ``kind`` is ``Kind`` or ``Kind.group``."""

    verb: ClassVar[Verb] = "delete"
    line: int
    kind: str
    namespace: str | None
    name: str
    target: str | None


@dataclass(frozen=True, slots=True)
class IgnorePattern:
    """``/ignore <pattern> [in <target>]``; the pattern as written (unquoted), not yet vetted."""

    verb: ClassVar[Verb] = "ignore"
    line: int
    pattern: str
    target: str | None


Command: TypeAlias = (
    Help
    | Recheck
    | ApproveHead
    | ApproveCancel
    | ApproveObject
    | RejectObject
    | DeleteObject
    | IgnorePattern
)

# "unknown-verb" is `/ichor <word>` with a word that is no verb: the caller replies with help.
# Every other kind is a usage error of one argument of a known verb.
ProblemKind: TypeAlias = Literal[
    "unknown-verb",
    "extra-argument",
    "missing-argument",
    "bad-object",
    "bad-namespace",
    "bad-name",
    "bad-kind",
    "bad-field",
    "bad-reason",
    "duplicate-field",
    "bad-pattern",
    "bad-quote",
    "bad-target",
]


@dataclass(frozen=True, slots=True)
class CommandProblem:
    """A command line that cannot run. ``argument`` is the offending word as written (None
    when one is missing); ``message`` is one plain-text line for a person, ending with the
    verb's usage, to be escaped by whoever renders it."""

    line: int
    kind: ProblemKind
    verb: str
    argument: str | None
    message: str


@dataclass(frozen=True, slots=True)
class ParsedComment:
    """The command lines of one comment in order. At most ``MAX_COMMANDS`` command lines are
    read, whether they parse or not; ``truncated`` says that more followed and were dropped."""

    commands: tuple[Command, ...]
    problems: tuple[CommandProblem, ...]
    truncated: bool
