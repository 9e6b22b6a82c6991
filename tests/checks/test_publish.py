"""Publishing a comparison: the verdict is posted even when the comments around it fail."""

from __future__ import annotations

from pathlib import Path

from bot.checks.compare import compare_reports
from bot.checks.publish import Publication, publish
from bot.errors import PermanentForgeError
from bot.forges.base import CheckHandle, Conclusion
from bot.gate.codes import IssueCode
from bot.gate.report import Issue, Report, TargetReport
from bot.repos import ForgeKind, RepoRef
from tests.support.recording_forge import RecordingForge

REPO = RepoRef(ForgeKind.GITEA, "o/r", clone_url="https://gitea.example/o/r.git")


def test_verdict_is_posted_when_summary_and_line_comments_fail(tmp_path: Path) -> None:
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
    forge = RecordingForge(
        tmp_path,
        failures={
            "upsert_summary_comment": PermanentForgeError("comment refused"),
            "sync_line_comments": RuntimeError("a bug in line comments"),
        },
    )
    target = Publication(
        REPO, CheckHandle("h" * 40), 7, "gitea:o/r:7", "b" * 40, True, True, 30, None
    )
    output = publish(forge, target, comparison, {"t/notes.txt": frozenset({1})}, None)
    assert output.conclusion is Conclusion.FAILURE
    completed = [args[2] for args in forge.calls_of("complete_check")]
    assert [o.conclusion for o in completed] == [Conclusion.FAILURE]
