"""What the forge shows: titles, summary table, annotations, the full list, the summary comment."""

from __future__ import annotations

import re
from collections.abc import Collection

import pytest

from bot.checks.compare import CheckComparison, compare_reports
from bot.checks.output import (
    MAX_COMMENT_CHARS,
    MAX_OUTPUT_CHARS,
    _fit,
    check_output,
    error_output,
    summary_comment,
)
from bot.forges.base import CHECK_NAME, SUMMARY_MARKER, Conclusion
from bot.gate.codes import CODES, IssueCode
from bot.gate.report import ConfigIssue, Issue, Report, TargetReport, empty_counts
from bot.paths import decode_path

HEAD = "a1b2c3d4e5f6" + "0" * 28
BASE = "0f1e2d3c4b5a" + "1" * 28
OLD = Issue.of(IssueCode.FOREIGN_FILE, "prod/notes.txt", "not YAML")
NEW = Issue.of(IssueCode.PLAINTEXT_SECRET, "prod/db.yaml", "Secret 'db' in plain text", line=4)
WARN = Issue.of(IssueCode.IGNORED_MANAGED_OBJECT, "prod/old.yaml", "holds a managed object")
# Our own tags: everything else that looks like markup must be escaped.
OUR_TAGS = re.compile(r"</?code>|<wbr>|<!-- ichor:summary -->")


def target(name: str, *issues: Issue, path: str | None = None) -> TargetReport:
    return TargetReport(name, name if path is None else path, issues, empty_counts())


def compare(
    head: Collection[TargetReport],
    base: Collection[TargetReport] | None = (),
    *,
    touched: Collection[str] | None = None,
    changed: Collection[str] = (),
    config: tuple[ConfigIssue, ...] = (),
) -> CheckComparison:
    return compare_reports(
        Report(HEAD, config, tuple(head)),
        None if base is None else Report(BASE, (), tuple(base)),
        head_sha=HEAD,
        base_sha=None if base is None else BASE,
        touched={t.name for t in head} if touched is None else touched,
        changed_paths=changed,
    )


def test_constants() -> None:
    assert CHECK_NAME == "ichor/acceptance"
    assert SUMMARY_MARKER == "<!-- ichor:summary -->"
    assert MAX_OUTPUT_CHARS == 65535


# --- titles and conclusions -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "base", "touched", "title", "conclusion"),
    [
        (
            [target("prod", OLD, NEW), target("dev", NEW)],
            [target("prod", OLD), target("dev")],
            None,
            "2 targets refused · 2 new issues, 1 already on base",
            Conclusion.FAILURE,
        ),
        ([target("prod", NEW)], [target("prod")], None, "1 target refused · 1 new issue", None),
        (
            [target("prod", OLD)],
            [target("prod", OLD)],
            None,
            "1 target refused · no new issues, 1 already on base",
            Conclusion.FAILURE,
        ),
        (
            [target("prod"), target("dev")],
            [],
            None,
            "All 2 touched targets accepted",
            Conclusion.SUCCESS,
        ),
        ([target("prod")], [], None, "1 touched target accepted", Conclusion.SUCCESS),
        (
            [target("prod", WARN), target("dev")],
            [],
            None,
            "All 2 touched targets accepted · 1 new warning",
            Conclusion.SUCCESS,
        ),
        ([target("prod", NEW)], [], set(), "No GitTarget path touched", Conclusion.SUCCESS),
    ],
)
def test_title_and_conclusion(
    head: list[TargetReport],
    base: list[TargetReport],
    touched: set[str] | None,
    title: str,
    conclusion: Conclusion | None,
) -> None:
    out = check_output(compare(head, base, touched=touched))
    assert out.title == title
    assert len(out.title) <= 255
    assert out.conclusion is (conclusion or Conclusion.FAILURE)


def test_configuration_issues_come_first() -> None:
    config = (
        ConfigIssue("unknown-key", "targets[0].colour is not a known key"),
        ConfigIssue("overlapping-paths", "a and a/b overlap"),
    )
    out = check_output(compare([], config=config))
    assert out.title == "Configuration invalid: 2 issues"
    assert out.conclusion is Conclusion.FAILURE
    assert out.summary.startswith("### The configuration is not valid")
    assert "overlapping-paths" in out.summary and "a and a/b overlap" in out.summary
    assert "overlapping-paths" in out.text
    comment = summary_comment(compare([], config=config))
    assert comment.splitlines()[:2] == [SUMMARY_MARKER, "❌ **Configuration invalid: 2 issues**"]


# --- summary ---------------------------------------------------------------------------------


def test_summary_table_fixes_and_untouched() -> None:
    comparison = compare(
        [target("prod", OLD, NEW, NEW), target("dev"), target("stage")],
        [target("prod", OLD)],
        touched={"prod", "dev"},
    )
    summary = check_output(comparison).summary
    assert "| prod | <code>prod</code> | ❌ refused | ❌ refused | 2 | 1 |" in summary
    assert "| dev | <code>dev</code> | ✅ accepted | — | 0 | 0 |" in summary  # not at base
    assert "Not touched by this change: stage." in summary
    assert "Checked <code>a1b2c3d</code> against base <code>0f1e2d3</code>." in summary
    # Each kind once, with its summary and its fix.
    assert summary.count(CODES[IssueCode.PLAINTEXT_SECRET].fix) == 1
    assert summary.count(CODES[IssueCode.FOREIGN_FILE].fix) == 1
    assert "**`plaintext-secret`** (2 new)" in summary
    assert "**`foreign-file`** (1 on base)" in summary


def test_nothing_touched() -> None:
    out = check_output(compare([target("prod", NEW)], touched=()))
    assert "touches no GitTarget path" in out.summary
    assert "Not touched by this change: prod." in out.summary
    assert out.annotations == ()


# --- annotations -----------------------------------------------------------------------------


def test_annotations_only_for_changed_files() -> None:
    nowhere = Issue.of(IssueCode.FOREIGN_FILE, "prod/untouched.sh", "not YAML")
    comparison = compare(
        [target("prod", OLD, NEW, WARN, nowhere)],
        [target("prod", OLD)],
        changed={"prod/db.yaml", "prod/notes.txt", "prod/old.yaml"},
    )
    out = check_output(comparison)
    got = [(a.path, a.start_line, a.end_line, a.level, a.title) for a in out.annotations]
    assert got == [  # new first, each group by path
        ("prod/db.yaml", 4, 4, "failure", "plaintext-secret"),
        ("prod/old.yaml", 1, 1, "warning", "ignored-managed-object"),
        ("prod/notes.txt", 1, 1, "failure", "foreign-file (already on base)"),
    ]
    fix = CODES[IssueCode.PLAINTEXT_SECRET].fix
    assert out.annotations[0].message == f"Secret 'db' in plain text\nFix: {fix}"
    # The issue in an unchanged file is listed in the summary instead.
    assert "### Issues without an annotation (1)" in out.summary
    assert "- <code>prod/untouched.sh</code> — `foreign-file` — not YAML" in out.summary
    assert "<code>prod/db.yaml</code>:4" not in out.summary


def test_annotation_cap_sends_the_rest_to_the_summary() -> None:
    issues = [
        Issue.of(IssueCode.INVALID_YAML, "prod/big.yaml", f"bad {n}", line=n) for n in range(1200)
    ]
    comparison = compare([target("prod", *issues)], changed={"prod/big.yaml"})
    out = check_output(comparison)
    assert len(out.annotations) == 1000
    assert [a.start_line for a in out.annotations] == [max(n, 1) for n in range(1000)]
    assert "### Issues without an annotation (200)" in out.summary
    assert "200 over the limit of 1000 annotations" in out.summary
    listed = re.findall(r"^- <code>prod/big\.yaml</code>:(\d+) ", out.summary, re.M)
    assert listed == [str(n) for n in range(1000, 1200)]
    assert len(check_output(comparison, max_annotations=0).annotations) == 0


def test_non_utf8_name_is_never_annotated_and_always_encodable() -> None:
    path = decode_path(b"prod/bad\xff.txt")
    issue = Issue.of(IssueCode.FOREIGN_FILE, path, f"not YAML: {path}")
    comparison = compare([target("prod", issue)], changed={path})
    out = check_output(comparison)
    assert out.annotations == ()
    assert "<code>prod/bad&#92;xff.txt</code>" in out.summary
    assert "1 in files whose names cannot be annotated" in out.summary
    for text in (out.summary, out.text, summary_comment(comparison)):
        text.encode("utf-8")  # no lone surrogate reaches the forge


# --- the full list and truncation ------------------------------------------------------------


def test_text_lists_every_issue_marked() -> None:
    shadow = Issue.of(
        IssueCode.IGNORE_SHADOWS_MANAGED, "prod/.gittargetignore", "hides all", line=2, pattern="*"
    )
    comparison = compare([target("prod", OLD, NEW, shadow), target("dev")], [target("prod", OLD)])
    text = check_output(comparison).text
    lines = text.splitlines()
    assert lines[0] == "### prod — <code>prod</code> — refused (base: refused)"
    assert lines[2:5] == [
        "- [new] <code>prod/.gittargetignore</code>:2 — `ignore-shadows-managed` — hides all"
        " — pattern <code>&#42;</code>",
        "- [new] <code>prod/db.yaml</code>:4 — `plaintext-secret` — Secret 'db' in plain text",
        "- [on base] <code>prod/notes.txt</code> — `foreign-file` — not YAML",
    ]
    assert "### dev — <code>dev</code> — accepted" in lines
    assert lines[-1] == "No issues."


def _many(count: int, width: int) -> list[Issue]:
    return [
        Issue.of(IssueCode.FOREIGN_FILE, f"prod/f{n:05}.txt", f"{n} " + "x" * width)
        for n in range(count)
    ]


def test_text_and_summary_truncate_within_the_limit_with_a_note() -> None:
    issues = _many(300, 900)
    comparison = compare([target("prod", *issues)])  # nothing changed: all in the summary
    out = check_output(comparison)
    for field, note in ((out.text, "not shown"), (out.summary, "see the full list below")):
        assert len(field) <= MAX_OUTPUT_CHARS
        last = field.splitlines()[-1]
        assert note in last
        left = int(re.search(r"and (\d+) more issues", last).group(1))  # type: ignore[union-attr]
        shown = len(re.findall(r"^- .*<code>prod/f\d{5}\.txt</code>", field, re.M))
        assert shown + left == 300
        assert shown > 50
    comment = summary_comment(comparison, details_url="https://bot.example/c/1")
    assert len(comment) <= MAX_COMMENT_CHARS
    assert comment.endswith("\n\n[Full report](https://bot.example/c/1)")
    assert "more issues; see the full list in the full report." in comment


def test_fit_uses_the_limit_exactly() -> None:
    def note(left: int) -> str:
        return f"- … and {left} more"

    items = [("a" * 9, True)] * 10  # 10 lines of 9 characters: 99 characters joined
    assert _fit([], items, 99, note) == "\n".join(["a" * 9] * 10)
    cut = _fit([], items, 98, note)
    assert len(cut) <= 98 and cut.endswith("more") and cut.count("a" * 9) == 8
    assert cut.splitlines()[-1] == "- … and 2 more"
    # Fixed parts longer than the limit are cut at a line, never past it.
    long = _fit(["b" * 70] * 3, [], 200, note)
    assert len(long) <= 200 and long.startswith("b" * 70 + "\n" + "b" * 70 + "\n\n… (cut")


def test_summary_exactly_at_the_limit_and_one_over() -> None:
    prefix = len("- <code>prod/z.txt</code> — `foreign-file` — ")
    count = 50
    while True:  # enough issues that one more line of up to 1000 shown characters fills it
        probe = check_output(compare([target("prod", *_many(count, 990))])).summary
        room = MAX_OUTPUT_CHARS - len(probe) - 1 - prefix  # the last line's message width
        if room <= 1000:
            break
        count += 1
    assert "more issue" not in probe and room > 0

    def last(width: int) -> str:
        issues = [*_many(count, 990), Issue.of(IssueCode.FOREIGN_FILE, "prod/z.txt", "y" * width)]
        return check_output(compare([target("prod", *issues)])).summary

    exact = last(room)
    assert len(exact) == MAX_OUTPUT_CHARS and "more issue" not in exact
    assert exact.endswith("y" * room)
    over = last(room + 1)
    assert len(over) <= MAX_OUTPUT_CHARS
    assert over.endswith("- … and 1 more issue; see the full list below.")


# --- hostile names and messages --------------------------------------------------------------

HOSTILE = [
    "prod/a|b.txt",
    "prod/tick`s``.txt",
    "prod/<!-- hidden -->.txt",
    "prod/new\nline| --- |.txt",
    "prod/<img src=x onerror=alert(1)>.txt",
    "prod/[x](https://evil.example).txt",
    "prod/@admins and #1.txt",
]


def test_hostile_paths_and_messages_are_escaped() -> None:
    issues = [Issue.of(IssueCode.FOREIGN_FILE, p, f"file {p} -->") for p in HOSTILE]
    comparison = compare([target("prod", *issues, path="prod")])
    out = check_output(comparison)
    comment = summary_comment(comparison)
    for text in (out.summary, out.text, comment):
        bare = OUR_TAGS.sub("", text)
        assert "<" not in bare and ">" not in bare
        assert "](" not in text and "`s" not in text
        # No mention, no cross-reference: outside code every sigil is cut from what follows.
        prose = re.sub(
            r"&#\d+;", "", re.sub(r"<code>.*?</code>", "", text).replace("&#8203;", "\u200b")
        )
        assert not re.search(r"[@#!]\w", prose)
        assert "@admins" not in text
        for line in text.splitlines():
            if line.startswith("| prod"):
                assert line.count("|") == 7  # the table row keeps its six cells
        listed = [line for line in text.splitlines() if line.startswith("- ")]
        assert sum(1 for line in listed if "foreign-file" in line) >= len(HOSTILE)
    assert "<code>prod/a&#124;b.txt</code>" in out.summary
    assert "<code>prod/new&#92;nline&#124; --- &#124;.txt</code>" in out.summary
    assert "<code>prod/&#60;!-- hidden --&#62;.txt</code>" in out.summary
    assert comment.count("<!--") == 1  # only the marker


def test_hostile_target_name_and_path_keep_the_table() -> None:
    head = target("a|b`<!--", NEW, path="x|y\n`z`")
    row = [line for line in check_output(compare([head])).summary.splitlines() if "refused" in line]
    assert row == [
        "| a&#124;b&#96;&#60;!&#8203;-- | <code>x&#124;y&#92;n&#96;z&#96;</code> "
        "| ❌ refused | — | 1 | 0 |"
    ]


def test_output_is_deterministic() -> None:
    issues = [
        *_many(50, 20),
        OLD,
        NEW,
        WARN,
        *(Issue.of(IssueCode.FOREIGN_FILE, p, "x") for p in HOSTILE),
    ]
    changed = {"prod/db.yaml", "prod/f00003.txt", *HOSTILE}
    first = compare(
        [target("prod", *issues), target("dev")], [target("prod", OLD)], changed=changed
    )
    again = compare(
        [target("prod", *reversed(issues)), target("dev")],
        [target("prod", OLD)],
        changed=set(reversed(sorted(changed))),
    )
    assert check_output(first) == check_output(again) == check_output(first)
    assert summary_comment(first) == summary_comment(again)


# --- the summary comment ---------------------------------------------------------------------


def test_comment_when_all_clear() -> None:
    clear = summary_comment(compare([target("prod"), target("dev")]))
    assert clear == (
        f"{SUMMARY_MARKER}\n✅ All clear: every touched GitTarget path is accepted at "
        "<code>a1b2c3d</code>."
    )
    nothing = summary_comment(compare([target("prod", NEW)], touched=()), details_url="https://x/1")
    assert nothing.splitlines() == [
        SUMMARY_MARKER,
        "✅ All clear: this change touches no GitTarget path (at <code>a1b2c3d</code>).",
        "",
        "[Full report](https://x/1)",
    ]


def test_comment_with_issues() -> None:
    comparison = compare(
        [target("prod", OLD, NEW), target("dev", WARN)],
        [target("prod", OLD), target("dev")],
    )
    comment = summary_comment(comparison, details_url="https://bot.example/r/1?a=(b)")
    lines = comment.splitlines()
    assert lines[:2] == [
        SUMMARY_MARKER,
        "❌ **1 target refused · 2 new issues, 1 already on base**",
    ]
    assert "| prod | <code>prod</code> | ❌ refused | ❌ refused | 1 | 1 |" in lines
    listed = [line for line in lines[lines.index("### Issues (3)") :] if line.startswith("- ")]
    assert listed == [
        "- <code>prod/db.yaml</code>:4 — `plaintext-secret` — Secret 'db' in plain text",
        "- <code>prod/old.yaml</code> — `ignored-managed-object` — holds a managed object",
        "- <code>prod/notes.txt</code> — `foreign-file` — not YAML *(already on base)*",
    ]
    assert lines[-1] == "[Full report](https://bot.example/r/1?a=%28b%29)"
    assert CODES[IssueCode.PLAINTEXT_SECRET].fix in comment


def test_comment_with_warnings_only_is_not_all_clear() -> None:
    comment = summary_comment(compare([target("prod", WARN)]))
    assert comment.splitlines()[1] == "✅ **1 touched target accepted · 1 new warning**"
    assert "ignored-managed-object" in comment


def test_comment_drops_links_that_are_not_web_links() -> None:
    comment = summary_comment(compare([target("prod", NEW)]), details_url="javascript:alert(1)")
    assert "javascript" not in comment


# --- errors ----------------------------------------------------------------------------------


def test_error_output() -> None:
    out = error_output("git fetch timed out after 120 s <retry>", head_sha=HEAD)
    assert out.conclusion is Conclusion.ERROR
    assert out.title == "The check could not be completed"
    assert "<code>a1b2c3d</code>" in out.summary
    assert "**Why:** git fetch timed out after 120 s &#60;retry&#62;" in out.summary
    assert "`/recheck`" in out.summary and "re-run" in out.summary
    assert out.annotations == ()
    assert "no reason was recorded" in error_output("  ", head_sha=HEAD).summary
    assert len(error_output("x" * 100_000, head_sha=HEAD).summary) < 3000


def test_an_issues_own_fix_is_shown_escaped_and_per_file() -> None:
    from bot.gate.fixes import sops_encrypt_command

    paths = ["prod/db.yaml", "prod/a|b <x> @admins.yaml"]
    issues = [
        Issue.of(IssueCode.PLAINTEXT_SECRET, p, "plain", line=1, fix=sops_encrypt_command(p))
        for p in paths
    ]
    comparison = compare([target("prod", *issues)], changed=set(paths))
    out = check_output(comparison)
    # The code's generic fix gives way to the commands naming each file.
    assert CODES[IssueCode.PLAINTEXT_SECRET].fix not in out.summary
    fixes = [line for line in out.summary.splitlines() if line.startswith("  - **Fix:** ")]
    assert len(fixes) == 2
    assert (
        "  - **Fix:** <code>sops --encrypt --encrypted-regex '^(data&#124;stringData)&#36;' "
        "--in-place prod/db.yaml</code>" in fixes
    )
    # A hostile name stays inside the code element, and copies without a zero-width space.
    bare = OUR_TAGS.sub("", out.summary)
    assert "<x>" not in bare and "@admins" not in out.summary
    assert "&#8203;" not in "".join(fixes)
    # A plain-text annotation carries the command as it is.
    messages = {a.path: a.message for a in out.annotations}
    assert messages[paths[1]] == "plain\nFix: " + sops_encrypt_command(paths[1])
