"""Which lines of the root ignore file match no entry (the pure part of the check)."""

from __future__ import annotations

from bot.gate.unused_ignore import unused_pattern_issues, unused_rules
from bot.ignore.rules import parse_ignore_file, read_rules

ENTRIES = ["app.yaml", "notes.txt", "keep.txt", "vendor/a/b.bin", "docs/x.md"]


def unused_lines(text: str, entries: list[str] = ENTRIES) -> list[int]:
    parsed = parse_ignore_file(text)
    applied = [r for r in read_rules(text) if r.line not in {d.line for d in parsed.denied}]
    return [rule.line for rule in unused_rules(applied, parsed.matcher.survey(entries))]


def test_a_line_is_used_when_it_alone_matches_an_entry() -> None:
    text = "\n".join(
        [
            "*.txt",  # 1: decides notes.txt
            "!keep.txt",  # 2: a negation whose pattern matches keep.txt
            "/notes.txt",  # 3: the last line matching notes.txt: it decides it
            "vendor/",  # 4: a directory, so every file below it
            "/vendor/a/",  # 5: below an ignored directory: still matches those files
            "/gone/",  # 6: nothing
            "[unclosed",  # 7: git never matches it
            "  /notes.txt",  # 8: the spaces are part of the pattern
            "!/nothing.txt",  # 9: a negation of nothing
        ]
    )
    assert unused_lines(text + "\n") == [6, 7, 8, 9]


def test_a_line_overridden_by_a_later_one_is_still_used() -> None:
    assert unused_lines("/keep.txt\n!/keep.txt\n") == []


def test_no_rules_no_entries() -> None:
    assert unused_lines("# only a comment\n") == []
    assert unused_lines("/a\n", []) == [1]


def test_issues_name_the_line_and_pattern() -> None:
    text = "/gone/\n  /notes.txt\n!  x\n"
    parsed = parse_ignore_file(text)
    survey = parsed.matcher.survey(ENTRIES)
    issues = unused_pattern_issues("t/.gittargetignore", read_rules(text), survey)
    assert [(i.kind.value, i.severity.value, i.path, i.line, i.pattern) for i in issues] == [
        ("unused-ignore-pattern", "warning", "t/.gittargetignore", 1, "/gone/"),
        ("unused-ignore-pattern", "warning", "t/.gittargetignore", 2, "  /notes.txt"),
        ("unused-ignore-pattern", "warning", "t/.gittargetignore", 3, "!  x"),
    ]
    assert issues[0].message == "pattern '/gone/' matches no entry of the target"
    assert issues[1].message.endswith("; its leading whitespace is part of the pattern")
    assert issues[2].message.endswith("; its leading whitespace is part of the pattern")
