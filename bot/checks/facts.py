"""A check's facts for the status page (:class:`bot.state.check_facts.CheckFacts`), from the
comparison the check published: pure, values in and out."""

from __future__ import annotations

from bot.checks.compare import CheckComparison
from bot.checks.request import CheckRequest
from bot.state.check_facts import (
    FINDING_LIMIT,
    WAITING_LIMIT,
    CheckFacts,
    Finding,
    TargetLine,
    Waiting,
    clip,
)


def check_facts(request: CheckRequest, comparison: CheckComparison) -> CheckFacts:
    targets = tuple(
        TargetLine(
            clip(t.name, 200),
            clip(t.path or "."),
            t.verdict.value,
            None if t.base_verdict is None else t.base_verdict.value,
            len(t.new_issues),
            len(t.existing_issues),
            t.blocks(pull_request=comparison.pull_request),
        )
        for t in comparison.targets
    )
    marked = [(t.name, m) for t in comparison.targets for m in t.issues]
    # New issues first, each kind in the gate's order within its target.
    marked.sort(key=lambda pair: not pair[1].new)
    findings = tuple(
        Finding(
            clip(target, 200),
            clip(m.issue.path),
            m.issue.line,
            m.issue.severity.value,
            m.issue.kind.value,
            clip(m.issue.message, 4_000),
            m.new,
        )
        for target, m in marked[:FINDING_LIMIT]
    )
    status = comparison.approvals
    waiting = () if status is None else status.waiting
    return CheckFacts(
        None if request.branch is None else clip(request.branch, 400),
        targets,
        findings,
        len(marked),
        tuple(Waiting(clip(o.target, 200), clip(o.identity), clip(o.path)) for o in waiting)[
            :WAITING_LIMIT
        ],
        0 if status is None else len(status.approved),
    )
