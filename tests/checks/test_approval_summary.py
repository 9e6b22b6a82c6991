"""The approvals part of the check's output: headline, the list of new objects, clipping,
escaping, and the buttons."""

from __future__ import annotations

import dataclasses

from bot.approvals.approval import Approval
from bot.approvals.pending import ApprovalStatus, NewObject, approval_status
from bot.checks.approval_summary import MAX_APPROVALS_CHARS, approvals_section, waiting_title
from bot.checks.compare import CheckComparison, TargetResult
from bot.checks.output import (
    APPROVE_ACTION,
    MAX_OUTPUT_CHARS,
    RECHECK_ACTION,
    check_output,
    error_output,
    summary_comment,
)
from bot.forges.base import Conclusion, headline
from bot.gate.report import ManagedObject, Verdict

HEAD = "a1b2c3d4" + "0" * 32


def new(name: str, target: str = "prod", namespace: str = "web") -> NewObject:
    obj = ManagedObject(
        ("apps", "Deployment", namespace, name), f"{target}/{name}.yaml", 1, "a" * 64
    )
    return NewObject(target, obj)


def comparison(
    status: ApprovalStatus | None, verdict: Verdict = Verdict.ACCEPTED
) -> CheckComparison:
    targets = (TargetResult("prod", "prod", verdict, Verdict.ACCEPTED, ()),)
    return CheckComparison(HEAD, "b" * 40, targets, approvals=status)


def test_the_headline_counts_objects_and_names_targets() -> None:
    assert waiting_title(ApprovalStatus((new("a"),))) == "1 new object in prod waits for /approve"
    two = ApprovalStatus((new("a"), new("b", "dev"), new("c")))
    assert waiting_title(two) == "3 new objects in prod, dev wait for /approve"


def test_waiting_objects_ask_for_approval_with_a_button() -> None:
    output = check_output(comparison(ApprovalStatus((new("a"), new("b")))))
    assert output.conclusion is Conclusion.ACTION_REQUIRED
    assert headline(output) == output.title == "2 new objects in prod wait for /approve"
    assert output.actions == (APPROVE_ACTION, RECHECK_ACTION)
    assert APPROVE_ACTION.identifier == "approve" and RECHECK_ACTION.identifier == "recheck"
    assert all(len(a.label) <= 20 and len(a.description) <= 40 for a in output.actions)
    comment = summary_comment(comparison(ApprovalStatus((new("a"),))))
    assert "⏳ **1 new object in prod waits for /approve**" in comment
    assert "| prod | <code>Deployment.apps web/a</code> | <code>prod/a.yaml</code> | ⏳" in comment


def test_approved_objects_name_who_and_where() -> None:
    objects = (new("a"), new("b"))
    given = Approval("bob", "f" * 40, frozenset(o.fingerprint for o in objects), "1")
    status = approval_status(objects, [given], pr_author="alice", allow_author_approval=False)
    output = check_output(comparison(status))
    assert output.conclusion is Conclusion.SUCCESS and output.actions == (RECHECK_ACTION,)
    assert output.summary.count("✅ approved by @&#8203;bob at <code>fffffff</code>") == 2
    comment = summary_comment(comparison(status))
    assert comment.startswith("<!-- ichor:summary -->\n✅ **") and "### Approvals" in comment


def test_an_approval_the_object_outgrew_says_whose_of_what_and_at_which_commit() -> None:
    before = new("a")
    given = Approval("bob", "f" * 40, frozenset({before.fingerprint}), "1")
    changed = NewObject("prod", dataclasses.replace(before.object, digest="e" * 64))
    status = approval_status((changed,), [given], pr_author="alice", allow_author_approval=False)
    summary = check_output(comparison(status)).summary
    row = next(
        line for line in summary.splitlines() if "<code>Deployment.apps web/a</code>" in line
    )
    assert row.endswith(
        "⏳ waiting for `/approve`; the approval by @&#8203;bob at <code>fffffff</code> was of an "
        "earlier version (the object changed since) |"
    )


def test_a_refusal_wins_over_waiting() -> None:
    output = check_output(comparison(ApprovalStatus((new("a"),)), Verdict.REFUSED))
    assert output.conclusion is Conclusion.FAILURE and output.actions == (RECHECK_ACTION,)
    assert "refused" in output.title and "⏳ waiting" in output.summary


def test_no_new_objects_no_section() -> None:
    assert approvals_section(None) == [] and approvals_section(ApprovalStatus()) == []
    assert "Approvals" not in check_output(comparison(None)).summary
    assert "All clear" in summary_comment(comparison(ApprovalStatus()))


def test_hostile_names_are_escaped() -> None:
    hostile = dataclasses.replace(
        new("x"),
        object=ManagedObject(("", "K|<b>", "@team", "*x*"), "prod/`a`|b.yaml", 1, "a" * 64),
    )
    given = Approval("@evil|<i>", "f" * 40, frozenset({hostile.fingerprint}), "1")
    text = "\n".join(approvals_section(ApprovalStatus((), ((hostile, given),))))
    assert "<b>" not in text and "<i>" not in text and "*x*" not in text
    assert "&#124;" in text and "&#96;a&#96;" in text
    assert "@&#8203;&#64;" not in text and "@&#8203;@&#8203;evil" in text


def test_a_long_list_is_clipped_and_counted() -> None:
    many = tuple(new(f"object-{n:05d}-" + "x" * 200) for n in range(2000))
    lines = approvals_section(ApprovalStatus(many))
    assert sum(len(line) + 1 for line in lines) < MAX_APPROVALS_CHARS + 2000
    shown = sum(1 for line in lines if line.startswith("| prod |"))
    assert 0 < shown < 2000
    assert (
        lines[-1]
        == f"… and {2000 - shown} more new objects ({2000 - shown} of them waiting), not listed."
    )
    output = check_output(comparison(ApprovalStatus(many)))
    assert len(output.summary) <= MAX_OUTPUT_CHARS


def test_an_error_offers_a_recheck() -> None:
    assert error_output("boom", head_sha=HEAD).actions == (RECHECK_ACTION,)
