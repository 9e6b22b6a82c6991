"""What the forge shows for a target under ``enforce: new`` (issue 22, item 5): a title that
says why a refused target passes, and a summary line naming the target, the setting and how
many issues on base are listed without blocking; on a push, that the full verdict applies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from bot.approvals.pending import ApprovalStatus, NewObject
from bot.checks.compare import CheckComparison, compare_reports
from bot.checks.headline import check_title
from bot.checks.output import check_output, summary_comment
from bot.forges.base import Conclusion
from bot.gate.codes import IssueCode
from bot.gate.policy import Enforce
from bot.gate.report import Issue, ManagedObject, Report, TargetReport, empty_counts

HEAD = "a1b2c3d4e5f6" + "0" * 28
BASE = "0f1e2d3c4b5a" + "1" * 28
OLD = tuple(Issue.of(IssueCode.FOREIGN_FILE, f"prod/old-{n}.txt", "not YAML") for n in range(306))
NEW = Issue.of(IssueCode.FOREIGN_FILE, "prod/new.txt", "not YAML")
WARN = Issue.of(IssueCode.IGNORED_MANAGED_OBJECT, "prod/w.yaml", "holds a managed object")
SAID = (
    "prod is under `enforce: new`: only the issues this change introduces fail the check; "
    "306 issues already on base are listed but not blocking."
)


def compare(
    head: Mapping[str, Sequence[Issue]],
    base: Mapping[str, Sequence[Issue]],
    *,
    enforce: Mapping[str, Enforce] | None = None,
    pull_request: bool = True,
) -> CheckComparison:
    def report(sha: str, targets: Mapping[str, Sequence[Issue]]) -> Report:
        reports = (TargetReport(k, k, tuple(v), empty_counts()) for k, v in targets.items())
        return Report(sha, (), tuple(reports))

    return compare_reports(
        report(HEAD, head),
        report(BASE, base),
        head_sha=HEAD,
        base_sha=BASE,
        touched=set(head),
        changed_paths={"prod/new.txt", "prod/old-0.txt"},
        enforce={"prod": "new"} if enforce is None else enforce,
        pull_request=pull_request,
    )


def test_a_clean_change_to_a_dirty_target_says_why_it_passes() -> None:
    comparison = compare({"prod": OLD}, {"prod": OLD})
    output = check_output(comparison)
    assert output.conclusion is Conclusion.SUCCESS
    assert (
        output.title
        == "Passed under enforce: new · no new issues, 306 already on base, not blocking"
    )
    assert SAID in output.summary
    assert "prod/old-1.txt" in output.summary  # listed, not hidden
    # The gate's verdict is told as it is; the line under the table says why it passes.
    assert "| prod | <code>prod</code> | ❌ refused | ❌ refused | 0 | 306 |" in output.summary
    comment = summary_comment(comparison)
    assert f"✅ **{output.title}**" in comment
    assert SAID in comment


def test_a_new_error_fails_and_the_old_ones_are_still_said_not_to_block() -> None:
    comparison = compare({"prod": (*OLD, NEW)}, {"prod": OLD})
    output = check_output(comparison)
    assert output.conclusion is Conclusion.FAILURE
    assert output.title == "1 target refused · 1 new issue, 306 already on base"
    assert SAID in output.summary
    assert summary_comment(comparison).splitlines()[1].startswith("❌ **1 target refused")
    # Annotated: the new file, and the changed file that holds an issue from the base, which
    # does not look like what fails the check.
    assert sorted((a.title, a.level) for a in output.annotations) == [
        ("foreign-file", "failure"),
        ("foreign-file (already on base, not blocking)", "warning"),
    ]
    push = check_output(compare({"prod": (*OLD, NEW)}, {"prod": OLD}, pull_request=False))
    assert sorted((a.title, a.level) for a in push.annotations) == [
        ("foreign-file", "failure"),
        ("foreign-file (already on base)", "failure"),
    ]


def test_a_new_warning_passes_and_is_counted() -> None:
    comparison = compare({"prod": (*OLD, WARN)}, {"prod": OLD})
    assert check_title(comparison) == (
        "Passed under enforce: new · 1 new warning, 306 already on base, not blocking"
    )


def test_one_issue_on_base_is_said_in_the_singular() -> None:
    comparison = compare({"prod": OLD[:1]}, {"prod": OLD[:1]})
    assert (
        "prod is under `enforce: new`: only the issues this change introduces fail the check; "
        "1 issue already on base is listed but not blocking." in check_output(comparison).summary
    )


def test_a_clean_target_under_enforce_new_says_so_too() -> None:
    comparison = compare({"prod": ()}, {"prod": ()})
    output = check_output(comparison)
    assert output.title == "1 touched target accepted"
    assert "fail the check; none is on base." in output.summary
    assert "All clear" in summary_comment(comparison)  # nothing to list, nothing to explain


def test_a_push_says_the_full_verdict_applies() -> None:
    comparison = compare({"prod": OLD}, {"prod": OLD}, pull_request=False)
    output = check_output(comparison)
    assert output.conclusion is Conclusion.FAILURE
    assert output.title == "1 target refused · no new issues, 306 already on base"
    assert (
        "prod is under `enforce: new`, which applies to pull requests: this push gets the full "
        "verdict, issues already on base included." in output.summary
    )


def test_a_target_under_enforce_all_is_not_mentioned() -> None:
    comparison = compare({"prod": OLD, "dev": OLD}, {"prod": OLD, "dev": OLD}, enforce={})
    output = check_output(comparison)
    assert "enforce" not in output.summary and "enforce" not in output.title
    assert output.title == "2 targets refused · no new issues, 612 already on base"


def test_the_title_counts_only_the_targets_that_block() -> None:
    comparison = compare({"prod": OLD, "dev": OLD[:2]}, {"prod": OLD, "dev": OLD[:2]})
    output = check_output(comparison)
    assert output.title == "1 target refused · no new issues, 308 already on base"
    assert SAID in output.summary
    assert "dev is under" not in output.summary


@pytest.mark.parametrize("pull_request", [True, False])
def test_waiting_approvals_keep_their_title(pull_request: bool) -> None:
    obj = ManagedObject(("", "ConfigMap", "web", "cm"), "prod/cm.yaml", 1, "0" * 64)
    comparison = compare({"prod": OLD}, {"prod": OLD}, pull_request=pull_request)
    waiting = ApprovalStatus(waiting=(NewObject("prod", obj),))
    comparison = CheckComparison(
        comparison.head_sha,
        comparison.base_sha,
        comparison.targets,
        approvals=waiting,
        pull_request=pull_request,
    )
    output = check_output(comparison)
    if pull_request:
        assert output.conclusion is Conclusion.ACTION_REQUIRED
        assert output.title == "1 new object in prod waits for /approve"
    else:
        assert output.conclusion is Conclusion.FAILURE
