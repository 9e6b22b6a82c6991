"""The pure comment plans every adapter executes: no forge, no I/O."""

from __future__ import annotations

from bot.forges.base import SUMMARY_MARKER, LineFinding
from bot.forges.plans import (
    LineComment,
    PostedComment,
    SummaryAction,
    plan_line_comments,
    plan_summary,
    summary_body,
)


def finding(fingerprint: str, line: int = 1) -> LineFinding:
    return LineFinding(fingerprint=fingerprint, path="a.yaml", line=line, body=f"about {line}")


# -- summary ------------------------------------------------------------------------------


def test_the_marker_is_added_once() -> None:
    assert summary_body("hi") == f"{SUMMARY_MARKER}\nhi"
    assert summary_body(f"{SUMMARY_MARKER}\nhi") == f"{SUMMARY_MARKER}\nhi"


def test_no_summary_yet_is_created() -> None:
    plan = plan_summary([PostedComment(1, "hello", by_bot=True)], summary_body("x"))
    assert plan.action is SummaryAction.CREATE and plan.existing is None


def test_a_person_quoting_the_marker_is_never_the_summary() -> None:
    body = summary_body("x")
    quoted = PostedComment(1, f"> {SUMMARY_MARKER} why?", by_bot=False)
    ours = PostedComment(2, f"{SUMMARY_MARKER}\nold", by_bot=True)
    plan = plan_summary([quoted, ours], body)
    assert plan.action is SummaryAction.EDIT and plan.existing == ours


def test_the_first_summary_wins_and_the_same_text_is_kept() -> None:
    body = summary_body("same")
    first, second = PostedComment(1, body + "\n", True), PostedComment(2, body, True)
    plan = plan_summary([first, second], body)
    assert plan.action is SummaryAction.KEEP and plan.existing == first


# -- line comments ------------------------------------------------------------------------


def test_new_findings_are_posted_up_to_the_limit_in_order() -> None:
    wanted = [finding("a"), finding("b"), finding("a", 9), finding("c")]
    plan = plan_line_comments([], wanted, 2)
    assert plan.post == (finding("a"), finding("b"))  # the first "a" wins
    assert plan.over_limit == (finding("c"),)
    assert (plan.resolve, plan.reopen, plan.unchanged) == ((), (), 0)


def test_a_negative_limit_posts_nothing() -> None:
    plan = plan_line_comments([], [finding("a")], -3)
    assert plan.post == () and plan.over_limit == (finding("a"),)


def test_gone_findings_resolve_their_open_comments_only() -> None:
    existing = [
        LineComment(1, "gone"),
        LineComment(2, "gone"),
        LineComment(3, "gone", resolved=True),
        LineComment(4, "kept"),
    ]
    plan = plan_line_comments(existing, [finding("kept")], 10)
    assert [c.id for c in plan.resolve] == [1, 2]
    assert plan.resolved_findings == 1
    assert (plan.post, plan.reopen, plan.unchanged) == ((), (), 1)


def test_a_returning_finding_reopens_its_newest_reopenable_comment() -> None:
    existing = [
        LineComment(1, "back", resolved=True),
        LineComment(2, "back", resolved=True),
        LineComment(3, "back", resolved=True, reopenable=False),  # a person resolved it
    ]
    plan = plan_line_comments(existing, [finding("back")], 10)
    assert [c.id for c in plan.reopen] == [2]
    assert (plan.post, plan.resolve, plan.unchanged) == ((), (), 1)


def test_a_finding_resolved_by_a_person_stays_resolved() -> None:
    existing = [LineComment(1, "back", resolved=True, reopenable=False)]
    plan = plan_line_comments(existing, [finding("back")], 10)
    assert plan.reopen == () and plan.post == () and plan.unchanged == 1


def test_a_finding_with_an_open_comment_is_left_alone() -> None:
    existing = [LineComment(1, "x", resolved=True), LineComment(2, "x")]
    plan = plan_line_comments(existing, [finding("x")], 10)
    assert (plan.post, plan.resolve, plan.reopen, plan.unchanged) == ((), (), (), 1)


def test_planning_is_linear_in_what_is_listed() -> None:
    # Thousands of comments and findings plan in one pass each (no quadratic scan).
    existing = [LineComment(i, f"f{i}", resolved=i % 2 == 0) for i in range(20_000)]
    wanted = [finding(f"f{i}") for i in range(10_000, 30_000)]
    plan = plan_line_comments(existing, wanted, 50)
    assert len(plan.post) == 50 and len(plan.over_limit) == 9_950
    assert plan.unchanged == 10_000
    assert len(plan.resolve) == 5_000 and len(plan.reopen) == 5_000
