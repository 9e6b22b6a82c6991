"""Publishing a comparison: the verdict is posted even when the comments around it fail."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.checks.compare import compare_reports
from bot.checks.publish import Publication, publish
from bot.errors import PermanentForgeError
from bot.forges.base import CheckHandle, CheckOutput, Conclusion, LineCommentSync, LineFinding
from bot.gate.codes import IssueCode
from bot.gate.report import Issue, Report, TargetReport
from bot.repos import ForgeKind, RepoRef

REPO = RepoRef(ForgeKind.GITEA, "o/r", clone_url="https://gitea.example/o/r.git")


class BrokenComments:
    """A forge whose comment calls fail; it records the verdicts it is given."""

    name = "gitea"

    def __init__(self) -> None:
        self.completed: list[CheckOutput] = []

    def upsert_summary_comment(self, repo: RepoRef, number: int, body: str) -> str:
        raise PermanentForgeError("comment refused")

    def complete_check(self, repo: RepoRef, check: CheckHandle, output: CheckOutput) -> None:
        self.completed.append(output)

    def sync_line_comments(
        self,
        repo: RepoRef,
        number: int,
        *,
        head_sha: str,
        base_sha: str,
        findings: Sequence[LineFinding],
        limit: int,
    ) -> LineCommentSync:
        raise RuntimeError("a bug in line comments")


def test_verdict_is_posted_when_summary_and_line_comments_fail() -> None:
    issue = Issue.of(IssueCode.FOREIGN_FILE, "t/notes.txt", "not YAML")
    head = Report("h" * 40, targets=(TargetReport("t", "t", (issue,), {}),))
    comparison = compare_reports(
        head,
        None,
        head_sha="h" * 40,
        base_sha="b" * 40,
        touched={"t"},
        changed_paths={"t/notes.txt"},
    )
    forge: Any = BrokenComments()
    target = Publication(
        REPO, CheckHandle("h" * 40), 7, "gitea:o/r:7", "b" * 40, True, True, 30, None
    )
    output = publish(forge, target, comparison, {"t/notes.txt": frozenset({1})}, None)
    assert output.conclusion is Conclusion.FAILURE
    assert [o.conclusion for o in forge.completed] == [Conclusion.FAILURE]
