"""The text report: verdict lines, issues grouped by code, fixes that work."""

from __future__ import annotations

import pytest

from bot.gate import Issue, IssueCode, Report, TargetReport
from bot.gate.report import empty_counts
from bot.ignore.rules import parse_ignore_file
from bot.paths import decode_path
from bot.render.text import ignore_pattern_for, report_to_text


@pytest.mark.parametrize(
    "rel",
    [
        "notes.txt",
        "a*b?.txt",
        "[x].txt",
        "back\\slash.txt",
        "#hash.txt",
        "!bang.txt",
        "trailing space ",
        "dir/with space/f.txt",
        decode_path(b"bad\xff.txt"),
        "new\nline.txt",
        ".yayamlls.yaml\u200e",
        "caf\u00e9.txt",
    ],
)
def test_suggested_pattern_ignores_exactly_that_path(rel: str) -> None:
    pattern = ignore_pattern_for(rel)
    assert "\n" not in pattern
    matcher = parse_ignore_file(pattern + "\n").matcher
    assert matcher.is_ignored(rel)
    assert not matcher.is_ignored("other.txt")
    assert not matcher.is_ignored("sub/" + rel)  # anchored at the target root


def test_layout() -> None:
    issues = (
        Issue.of(IssueCode.FOREIGN_FILE, "t/a.txt", "not YAML"),
        Issue.of(IssueCode.FOREIGN_FILE, "t/b.txt", "not YAML"),
        Issue.of(IssueCode.FOREIGN_SYMLINK, "t/l", "symbolic link to '/etc'"),
        Issue.of(
            IssueCode.IGNORE_SHADOWS_MANAGED, "t/.gittargetignore", "hides all", line=2, pattern="*"
        ),
    )
    refused = TargetReport("t", "t", issues, empty_counts())
    accepted = TargetReport("ok", "", (), empty_counts())
    text = report_to_text(Report("f" * 40, (), (refused, accepted)))
    lines = text.splitlines()
    assert lines[0] == "revision " + "f" * 40
    assert "REFUSED  t (t): 4 errors" in lines
    assert "ACCEPTED  ok (.): 0 errors" in lines
    assert "  foreign-file (2): A file in no accepted role of a GitTarget path." in lines
    assert "    2 \u00d7 not YAML" in lines  # a message shared by the group is said once
    assert "      t/a.txt" in lines
    assert "    t/.gittargetignore:2  hides all" in lines
    assert "    fix: git rm -r -- t/a.txt t/b.txt" in lines
    assert "     or: keep them, ignored:" in lines
    assert "         printf '%s\\n' '' /a.txt /b.txt >> t/.gittargetignore" in lines
    assert lines[-1] == "1 of 2 target(s) accepted"


def test_many_files_keep_every_command_pasteable() -> None:
    issues = tuple(Issue.of(IssueCode.FOREIGN_FILE, f"t/f{n:02}.txt", "x") for n in range(12))
    text = report_to_text(Report(None, (), (TargetReport("t", "t", issues, empty_counts()),)))
    lines = text.splitlines()
    rm = next(line for line in lines if line.startswith("    fix: git rm"))
    printf = next(line for line in lines if "printf" in line)
    assert rm.endswith("t/f09.txt") and "t/f10.txt" not in rm
    assert printf.endswith("/f09.txt >> t/.gittargetignore")
    assert "    (these name the first 10 of 12)" in lines
