"""The acceptance gate: a pure function of a tree snapshot and a policy."""

from bot.gate.codes import CODES, IssueCode, Severity
from bot.gate.policy import GatePolicy, TargetPolicy
from bot.gate.report import ConfigIssue, Issue, Report, Role, TargetReport, Verdict
from bot.gate.structural import StructuralResult, classify_target

__all__ = [
    "CODES",
    "ConfigIssue",
    "GatePolicy",
    "Issue",
    "IssueCode",
    "Report",
    "Role",
    "Severity",
    "StructuralResult",
    "TargetPolicy",
    "TargetReport",
    "Verdict",
    "classify_target",
]
