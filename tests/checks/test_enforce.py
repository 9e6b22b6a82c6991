"""``enforce: new`` decides a pull request's conclusion (issue 22, item 5; design.md 4): a target
under it fails the check only for an error the change introduces, on a pull request; a push
gets the full verdict, and configuration issues and waiting approvals still stop it."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from bot.approvals.pending import ApprovalStatus, NewObject
from bot.checks.compare import CheckComparison, compare_reports
from bot.forges.base import Conclusion
from bot.gate.codes import IssueCode
from bot.gate.policy import Enforce
from bot.gate.report import (
    ConfigIssue,
    Issue,
    ManagedObject,
    Report,
    TargetReport,
    Verdict,
    empty_counts,
)

HEAD = "a" * 40
BASE = "b" * 40
OLD = Issue.of(IssueCode.FOREIGN_FILE, "prod/old.txt", "not YAML", line=None)
NEW = Issue.of(IssueCode.FOREIGN_FILE, "prod/new.txt", "not YAML")
SECRET = Issue.of(IssueCode.PLAINTEXT_SECRET, "prod/db.yaml", "Secret 'db' in plain text", line=4)
WARN = Issue.of(IssueCode.IGNORED_MANAGED_OBJECT, "prod/w.yaml", "holds a managed object")


def target(name: str, *issues: Issue) -> TargetReport:
    return TargetReport(name, name, issues, empty_counts())


def compare(
    head: Collection[TargetReport],
    base: Collection[TargetReport] | None,
    *,
    enforce: Mapping[str, Enforce] | None = None,
    pull_request: bool = True,
    config: tuple[ConfigIssue, ...] = (),
) -> CheckComparison:
    return compare_reports(
        Report(HEAD, config, tuple(head)),
        None if base is None else Report(BASE, (), tuple(base)),
        head_sha=HEAD,
        base_sha=None if base is None else BASE,
        touched={t.name for t in head},
        enforce={"prod": "new"} if enforce is None else enforce,
        pull_request=pull_request,
    )


def test_a_clean_change_to_a_dirty_target_passes() -> None:
    comparison = compare([target("prod", OLD)], [target("prod", OLD)])
    (prod,) = comparison.targets
    assert prod.verdict is Verdict.REFUSED  # the gate's verdict is told as it is
    assert prod.enforce == "new"
    assert comparison.blocking == ()
    assert comparison.conclusion is Conclusion.SUCCESS


def test_an_error_the_change_introduces_fails_it() -> None:
    comparison = compare([target("prod", OLD, SECRET)], [target("prod", OLD)])
    assert [t.name for t in comparison.blocking] == ["prod"]
    assert comparison.conclusion is Conclusion.FAILURE


def test_a_new_warning_never_fails_it() -> None:
    comparison = compare([target("prod", OLD, WARN)], [target("prod", OLD)])
    assert comparison.conclusion is Conclusion.SUCCESS


def test_a_push_gets_the_full_verdict() -> None:
    comparison = compare([target("prod", OLD)], [target("prod", OLD)], pull_request=False)
    assert comparison.conclusion is Conclusion.FAILURE
    assert [t.name for t in comparison.blocking] == ["prod"]


def test_enforce_all_is_the_full_verdict_on_a_pull_request_too() -> None:
    comparison = compare([target("prod", OLD)], [target("prod", OLD)], enforce={})
    assert comparison.targets[0].enforce == "all"
    assert comparison.conclusion is Conclusion.FAILURE


def test_each_target_is_weighed_by_its_own_setting() -> None:
    head = [target("prod", OLD), target("staging", OLD)]
    comparison = compare(head, [target("prod", OLD), target("staging", OLD)])
    assert [t.name for t in comparison.blocking] == ["staging"]
    assert comparison.conclusion is Conclusion.FAILURE


def test_a_broken_configuration_still_fails() -> None:
    config = (ConfigIssue("invalid-value", "targets[0].enforce: 'neww' must be 'all' or 'new'"),)
    comparison = compare([], None, config=config)
    assert comparison.conclusion is Conclusion.FAILURE


def test_new_objects_of_a_strict_target_still_wait_for_approval() -> None:
    obj = ManagedObject(("", "ConfigMap", "web", "cm"), "prod/cm.yaml", 1, "0" * 64)
    waiting = ApprovalStatus(waiting=(NewObject("prod", obj),))
    comparison = compare([target("prod", OLD)], [target("prod", OLD)])
    comparison = CheckComparison(
        comparison.head_sha,
        comparison.base_sha,
        comparison.targets,
        approvals=waiting,
        pull_request=True,
    )
    assert comparison.conclusion is Conclusion.ACTION_REQUIRED


def test_without_a_base_every_issue_is_new() -> None:
    comparison = compare([target("prod", OLD)], None)
    assert comparison.conclusion is Conclusion.FAILURE


def test_a_target_whose_path_is_new_in_the_change_has_only_new_issues() -> None:
    # The base had the target configured but nothing under its path: no issue to keep.
    comparison = compare([target("prod", OLD)], [target("prod")])
    assert comparison.targets[0].new_issues == (OLD,)
    assert comparison.conclusion is Conclusion.FAILURE


def test_an_issue_moved_to_other_lines_is_not_introduced() -> None:
    moved = Issue.of(
        IssueCode.PLAINTEXT_SECRET, "prod/db.yaml", "Secret 'db' in plain text", line=40
    )
    comparison = compare([target("prod", moved)], [target("prod", SECRET)])
    assert comparison.conclusion is Conclusion.SUCCESS


def test_an_issue_whose_message_changed_in_the_same_file_is_not_introduced() -> None:
    renamed = Issue.of(
        IssueCode.PLAINTEXT_SECRET, "prod/db.yaml", "Secret 'db2' in plain text", line=4
    )
    comparison = compare([target("prod", renamed)], [target("prod", SECRET)])
    assert comparison.conclusion is Conclusion.SUCCESS


def test_a_second_issue_of_a_kind_in_one_file_is_introduced() -> None:
    second = Issue.of(
        IssueCode.PLAINTEXT_SECRET, "prod/db.yaml", "Secret 'db2' in plain text", line=9
    )
    comparison = compare([target("prod", SECRET, second)], [target("prod", SECRET)])
    assert comparison.targets[0].new_issues == (second,)
    assert comparison.conclusion is Conclusion.FAILURE


def test_a_file_moved_elsewhere_takes_its_issues_along_as_new() -> None:
    moved = Issue.of(IssueCode.FOREIGN_FILE, "prod/archive/old.txt", "not YAML")
    comparison = compare([target("prod", moved)], [target("prod", OLD)])
    assert comparison.conclusion is Conclusion.FAILURE
