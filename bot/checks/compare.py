"""Compare the gate's report at head with the base's: which issues a change introduced.

Pure: two reports and the changed paths in, a :class:`CheckComparison` out. An issue is
*existing* when the base report has the same finding (kind, path, pattern, message) in the
same target; otherwise it is *new*. Line numbers are not part of the identity, so an edit
above a finding does not make it new.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from bot.approvals.pending import ApprovalStatus
from bot.forges.base import Conclusion
from bot.gate.policy import CONFIG_FILE, GatePolicy, TargetPolicy
from bot.gate.report import ConfigIssue, Issue, Report, TargetReport, Verdict


@dataclass(frozen=True, slots=True)
class MarkedIssue:
    issue: Issue
    new: bool  # False: the base already had it


@dataclass(frozen=True, slots=True)
class TargetResult:
    name: str
    path: str
    verdict: Verdict  # at head
    base_verdict: Verdict | None  # None when the target has no report at base
    issues: tuple[MarkedIssue, ...]

    @property
    def new_issues(self) -> tuple[Issue, ...]:
        return tuple(m.issue for m in self.issues if m.new)

    @property
    def existing_issues(self) -> tuple[Issue, ...]:
        return tuple(m.issue for m in self.issues if not m.new)


@dataclass(frozen=True, slots=True)
class CheckComparison:
    head_sha: str
    base_sha: str | None
    targets: tuple[TargetResult, ...]  # the touched targets, in configuration order
    untouched: tuple[str, ...] = ()  # names of targets the change does not touch
    config_issues: tuple[ConfigIssue, ...] = ()
    changed_paths: frozenset[str] = frozenset()
    # The strict targets' new objects and who approved them; None when none are new, or when
    # the check is not a pull request's (approvals are given on pull requests).
    approvals: ApprovalStatus | None = None

    @property
    def conclusion(self) -> Conclusion:
        if self.config_issues:
            return Conclusion.FAILURE
        if any(t.verdict is Verdict.REFUSED for t in self.targets):
            return Conclusion.FAILURE
        if self.approvals is not None and not self.approvals.complete:
            return Conclusion.ACTION_REQUIRED
        return Conclusion.SUCCESS

    @property
    def new_issue_count(self) -> int:
        return sum(len(t.new_issues) for t in self.targets)

    @property
    def existing_issue_count(self) -> int:
        return sum(len(t.existing_issues) for t in self.targets)


def _under(path: str, root: str) -> bool:
    return root == "" or path == root or path.startswith(root + "/")


def touched_targets(
    policy: GatePolicy, changed_paths: Collection[str] | None
) -> tuple[TargetPolicy, ...]:
    """The targets a change touches; every target when ``changed_paths`` is None (first push)
    or when ``.ichor.yaml`` itself changed. A target is touched by a change inside its path or
    to its capabilities file."""
    if changed_paths is None or CONFIG_FILE in changed_paths:
        return policy.targets
    touched = []
    for target in policy.targets:
        if any(_under(p, target.path) for p in changed_paths) or (
            target.capabilities is not None and target.capabilities in changed_paths
        ):
            touched.append(target)
    return tuple(touched)


def _identity(issue: Issue) -> tuple[str, str, str | None, str]:
    return (issue.kind.value, issue.path, issue.pattern, issue.message)


def _loose_identity(issue: Issue) -> tuple[str, str, str | None]:
    return (issue.kind.value, issue.path, issue.pattern)


def mark_issues(head: Iterable[Issue], base: Iterable[Issue]) -> tuple[MarkedIssue, ...]:
    """Mark each head issue new or existing, matching base issues at most once each: first by
    full identity, then (for messages that name a changed detail) by kind, path and pattern."""
    head = list(head)
    exact = Counter(_identity(i) for i in base)
    loose = Counter(_loose_identity(i) for i in base)
    matched = [False] * len(head)
    for n, issue in enumerate(head):
        key = _identity(issue)
        if exact[key] > 0:
            exact[key] -= 1
            loose[_loose_identity(issue)] -= 1
            matched[n] = True
    for n, issue in enumerate(head):
        if not matched[n]:
            lkey = _loose_identity(issue)
            if loose[lkey] > 0:
                loose[lkey] -= 1
                matched[n] = True
    return tuple(MarkedIssue(issue, not seen) for issue, seen in zip(head, matched, strict=True))


def compare_reports(
    head: Report,
    base: Report | None,
    *,
    head_sha: str,
    base_sha: str | None,
    touched: Collection[str],
    changed_paths: Collection[str] = (),
) -> CheckComparison:
    """The comparison for the targets named in ``touched`` (the others are listed untouched).

    ``base`` is None when there is nothing to compare with (a new branch): every issue is new.
    """
    base_targets: dict[str, TargetReport] = {t.name: t for t in base.targets} if base else {}
    results = []
    untouched = []
    for target in head.targets:
        if target.name not in touched:
            untouched.append(target.name)
            continue
        before = base_targets.get(target.name)
        marked = mark_issues(target.issues, before.issues if before else ())
        results.append(
            TargetResult(
                target.name,
                target.path,
                target.verdict,
                before.verdict if before else None,
                marked,
            )
        )
    return CheckComparison(
        head_sha=head_sha,
        base_sha=base_sha,
        targets=tuple(results),
        untouched=tuple(untouched),
        config_issues=head.config_issues,
        changed_paths=frozenset(changed_paths),
    )
