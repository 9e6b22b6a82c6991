"""Compare the gate's report at head with the base's: which issues a change introduced.

Pure: two reports and the changed paths in, a :class:`CheckComparison` out. An issue is
*existing* when the base report has the same finding (kind, path, pattern, message) in the
same target; otherwise it is *new*. Line numbers are not part of the identity, so an edit
above a finding does not make it new.

What fails the check is decided here too: a touched target refused at head, except that a
target under ``enforce: new`` fails a pull request's check only for an error the pull request
introduces (design.md 4).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from bot.approvals.pending import ApprovalStatus
from bot.forges.base import Conclusion
from bot.gate.codes import Severity
from bot.gate.policy import CONFIG_FILE, Enforce, GatePolicy, TargetPolicy
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
    enforce: Enforce = "all"  # as configured; it weighs a pull request's check only

    @property
    def new_issues(self) -> tuple[Issue, ...]:
        return tuple(m.issue for m in self.issues if m.new)

    @property
    def existing_issues(self) -> tuple[Issue, ...]:
        return tuple(m.issue for m in self.issues if not m.new)

    def only_new_count(self, *, pull_request: bool) -> bool:
        """Whether its issues already on base are listed only: under ``enforce: new``, on a
        pull request."""
        return pull_request and self.enforce == "new"

    def blocks(self, *, pull_request: bool) -> bool:
        """Whether this target fails the check: refused at head, or, when only new issues
        count, by an error the change introduces (warnings never refuse)."""
        if self.only_new_count(pull_request=pull_request):
            return any(i.severity is Severity.ERROR for i in self.new_issues)
        return self.verdict is Verdict.REFUSED


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
    # A pull request's check, or a branch's checked as its pull request would be: the only
    # checks ``enforce: new`` applies to. A push to the default branch gets the full verdict.
    pull_request: bool = False
    # A GitHub merge group's check: the pull requests it queues (empty when its branch named
    # none); None for any other check.
    queued: tuple[int, ...] | None = None

    @property
    def merge_group(self) -> bool:
        return self.queued is not None

    @property
    def blocking(self) -> tuple[TargetResult, ...]:
        """The touched targets that fail the check (see :meth:`TargetResult.blocks`)."""
        return tuple(t for t in self.targets if t.blocks(pull_request=self.pull_request))

    @property
    def conclusion(self) -> Conclusion:
        # A broken configuration fails whatever each target's setting: nothing was checked.
        if self.config_issues:
            return Conclusion.FAILURE
        if self.blocking:
            return Conclusion.FAILURE
        # Waiting for /approve is not an issue, old or new: it stops the change either way.
        # Nobody can approve a merge group: an object approved on none of its pull requests
        # fails it.
        if self.approvals is not None and not self.approvals.complete:
            return Conclusion.FAILURE if self.merge_group else Conclusion.ACTION_REQUIRED
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
    enforce: Mapping[str, Enforce] | None = None,
    pull_request: bool = False,
) -> CheckComparison:
    """The comparison for the targets named in ``touched`` (the others are listed untouched).

    ``base`` is None when there is nothing to compare with (a new branch): every issue is new.
    ``enforce`` is each target's setting by name (``all`` when not named); ``pull_request``
    says whether the check is one it applies to.
    """
    enforce = enforce or {}
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
                enforce.get(target.name, "all"),
            )
        )
    return CheckComparison(
        head_sha=head_sha,
        base_sha=base_sha,
        targets=tuple(results),
        untouched=tuple(untouched),
        config_issues=head.config_issues,
        changed_paths=frozenset(changed_paths),
        pull_request=pull_request,
    )
