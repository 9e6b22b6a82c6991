"""Focused tests of the ``.gittargetignore`` matcher; git itself is in the differential test."""

from __future__ import annotations

import pytest

from bot.ignore.rules import (
    DENIED_PATTERNS,
    DeniedPattern,
    IgnoreMatcher,
    IgnoreRule,
    is_denied,
    parse_ignore_file,
    read_rules,
)
from bot.paths import decode_path


def matcher(text: str) -> IgnoreMatcher:
    """All rules applied, denied ones included (they are only refused by parse_ignore_file)."""
    return IgnoreMatcher(read_rules(text))


def ignored(text: str, paths: list[str]) -> set[str]:
    m = matcher(text)
    return {path for path in paths if m.is_ignored(path)}


# -- directories -------------------------------------------------------------------------


def test_ignored_directory_cannot_be_re_included() -> None:
    m = matcher("d/\n!d/f\n!d/sub/\n")
    assert m.is_ignored("d/f")
    assert m.is_ignored("d/sub/g")
    assert m.rule_for("d/f") == IgnoreRule(1, "d/", negated=False)


def test_directory_contents_can_be_re_included_when_the_directory_is_not_ignored() -> None:
    assert ignored("d/*\n!d/f\n", ["d/f", "d/g", "d/e/h"]) == {"d/g", "d/e/h"}


def test_trailing_double_star_does_not_match_the_directory_itself() -> None:
    text = "foo/**\n!foo/keep\n!foo/sub/keep\n"
    assert ignored(text, ["foo/keep", "foo/x", "foo/sub/keep", "bar"]) == {"foo/x", "foo/sub/keep"}
    assert ignored("foo/**/\n", ["foo/x", "foo/d/x"]) == {"foo/d/x"}


def test_directory_only_pattern_does_not_match_files() -> None:
    assert ignored("a/\n", ["a", "x/a", "y/a/f"]) == {"y/a/f"}


def test_parent_match_does_not_decide_for_files_below() -> None:
    # ``x`` ignores the directory x, but the later ``!x/`` un-ignores it; x/f is then matched
    # by nothing (``x`` does not match the basename ``f``).
    assert ignored("x\n!x/\n", ["x/f"]) == set()


# -- order and negation --------------------------------------------------------------------


def test_last_matching_line_wins() -> None:
    assert ignored("*.log\n!keep.log\n", ["a.log", "keep.log"]) == {"a.log"}
    assert ignored("!keep.log\n*.log\n", ["a.log", "keep.log"]) == {"a.log", "keep.log"}


def test_rule_for_names_the_deciding_line() -> None:
    m = parse_ignore_file("# comment\n\n*.log\n!keep.log\nbuild/\n").matcher
    assert m.rule_for("x.log") == IgnoreRule(3, "*.log", negated=False)
    assert m.rule_for("keep.log") is None
    assert m.rule_for("build/out/a.yaml") == IgnoreRule(5, "build/", negated=False)
    assert m.rule_for("src/a.yaml") is None


def test_negation_prefix_and_escapes() -> None:
    assert ignored("\\!a\n\\#b\n#c\n !d\n", ["!a", "a", "#b", "#c", " !d", "d"]) == {
        "!a",
        "#b",
        " !d",
    }
    assert ignored("!\n!/\n", ["a", "!"]) == set()


# -- anchoring --------------------------------------------------------------------------


def test_anchoring() -> None:
    paths = ["a", "x/a", "a/b", "x/a/b", "y/z"]
    assert ignored("a\n", paths) == {"a", "x/a", "a/b", "x/a/b"}
    assert ignored("/a\n", paths) == {"a", "a/b"}
    assert ignored("a/b\n", paths) == {"a/b"}
    assert ignored("*/z\n", paths) == {"y/z"}
    assert ignored("//a\na//\n/\n", paths) == set()


def test_slash_inside_brackets_or_escaped_anchors_the_pattern() -> None:
    assert ignored("[x/]y\n", ["xy", "d/xy"]) == {"xy"}
    assert ignored("a\\/b\n", ["a/b", "d/a/b"]) == {"a/b"}


# -- wildcards ------------------------------------------------------------------------


def test_double_star() -> None:
    paths = ["a", "d/a", "d/e/a", "a/b", "a/x/b", "a/x/y/b", "q/a/b"]
    assert ignored("**/a\n", paths) == set(paths)
    assert ignored("a/**/b\n", paths) == {"a/b", "a/x/b", "a/x/y/b"}
    assert ignored("a/***/b\n", paths) == {"a/b", "a/x/b", "a/x/y/b"}
    assert ignored("a/**\\/b\n", paths) == {"a/x/b", "a/x/y/b"}
    assert ignored("**a\n", ["xa", "d/xa", "a/y"]) == {"xa", "d/xa", "a/y"}


def test_double_star_right_after_the_literal_prefix() -> None:
    # git hands only the text after the literal prefix ``foo`` to wildmatch, so ``**`` is
    # "at the start" there: it matches any text, slashes included, or nothing at all.
    paths = ["foobar", "foo/bar", "foox/bar", "foox/y/bar", "x/foobar", "fobar"]
    assert ignored("foo**/bar\n", paths) == {"foobar", "foo/bar", "foox/bar", "foox/y/bar"}
    assert ignored("x/foo**\n!x/foox/\n", ["x/foo", "x/foox/y", "x/fo"]) == {"x/foo", "x/foox/y"}


def test_star_and_question_mark_stay_in_one_segment() -> None:
    assert ignored("a*\n", ["ab", "d/ab", "ba"]) == {"ab", "d/ab"}
    assert ignored("d/*b\n", ["d/ab", "d/e/ab", "d/eb/c"]) == {"d/ab", "d/eb/c"}
    assert ignored("d/?\n", ["d/a", "d/ab", "d/c/b"]) == {"d/a", "d/c/b"}


def test_question_mark_matches_one_byte() -> None:
    assert ignored("?\n", ["a", "é", decode_path(b"\xff")]) == {"a", decode_path(b"\xff")}
    assert ignored("caf??\n", ["café", "cafe"]) == {"café"}


def test_newline_in_a_name() -> None:
    assert ignored("**/x\n", ["a\nb/x"]) == {"a\nb/x"}


# -- brackets ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("[abc]", ["a", "c"], ["d", "[abc]"]),
        ("[!a]", ["b", "]"], ["a", "é"]),
        ("[^a]", ["b"], ["a"]),
        ("[a-c]", ["b"], ["d", "-"]),
        ("[c-a]", ["c"], ["a", "b"]),  # the first end is a member on its own
        ("[a-c-e]", ["b", "-", "e"], ["d"]),
        ("[]a]", ["]", "a"], ["b"]),
        ("[!]a]", ["b"], ["]", "a"]),
        ("[\\]]", ["]"], ["\\"]),
        ("[a\\-c]", ["a", "-", "c"], ["b"]),
        ("[[:digit:]]", ["0", "9"], ["a"]),
        ("[[:alpha:]]", ["a", "Z"], ["1", "é", "_"]),
        ("[[:space:]]", [" ", "\t", "\n", "\r"], ["\x0b", "a"]),
        ("[[:upper:][:digit:]]", ["A", "1"], ["a"]),
        ("[![:alnum:]]", ["_", "-"], ["a", "0"]),
        ("[[:xdigit:]]", ["f", "F", "0"], ["g"]),
        ("[[:punct:]]", ["!", "~"], ["a", " "]),
        ("[[:foo:]]", [], ["f", "f]", "["]),
        ("[a[:foo:]]", [], ["a"]),
        ("[[:a]", ["[", ":", "a"], ["b"]),
        ("[a", [], ["[a", "a"]),
    ],
)
def test_bracket_expressions(pattern: str, matches: list[str], misses: list[str]) -> None:
    m = matcher(pattern + "\n")
    assert [p for p in matches + misses if m.is_ignored(p)] == matches


def test_bracket_never_matches_a_slash() -> None:
    assert ignored("x[!a]y\n", ["x/y", "xby"]) == {"xby"}


# -- line syntax -----------------------------------------------------------------------


def test_trailing_spaces() -> None:
    paths = ["a", "a ", "a  ", "b ", "b", "c\t", "c"]
    assert ignored("a  \n", paths) == {"a"}
    assert ignored("a\\ \n", paths) == {"a "}
    assert ignored("a\\  \n", paths) == {"a "}
    assert ignored("a \\ \n", paths) == {"a  "}
    assert ignored("c\t\n", paths) == {"c\t"}


def test_lone_backslash_never_matches() -> None:
    m = matcher("\\\na\\\n")
    assert not m
    assert not m.is_ignored("a")
    assert not m.is_ignored("\\")


def test_crlf_bom_and_comments() -> None:
    assert ignored("a\r\nb\r\n", ["a", "b", "a\r"]) == {"a", "b"}
    assert ignored("\ufeff#c\nd\n", ["#c", "d"]) == {"d"}
    assert ignored("e\n\ufefff\n", ["e", "f", "\ufefff"]) == {"e", "\ufefff"}
    assert read_rules("# c\n\n  \n\\#x\n")[0] == IgnoreRule(4, "\\#x", negated=False)


def test_non_utf8_names() -> None:
    raw = decode_path(b"l\xe9t")
    assert ignored(decode_path(b"l\xe9*\n"), [raw, "lét"]) == {raw}
    assert ignored("l?t\n", [raw, "lét"]) == {raw}


def test_empty_matcher() -> None:
    m = IgnoreMatcher.empty()
    assert not m
    assert m.rules == ()
    assert not m.is_ignored("a.yaml")
    assert matcher("*.log\n")


# -- denied patterns ----------------------------------------------------------------------


@pytest.mark.parametrize("pattern", sorted(DENIED_PATTERNS))
def test_denied_patterns(pattern: str) -> None:
    parsed = parse_ignore_file(f"docs/\n{pattern}\n")
    assert parsed.denied == (DeniedPattern(2, pattern),)
    assert [rule.pattern for rule in parsed.matcher.rules] == ["docs/"]
    assert not parsed.matcher.is_ignored("a.yaml")
    assert parsed.matcher.is_ignored("docs/a.yaml")


@pytest.mark.parametrize(
    "pattern",
    ["/*", "*/", "/**", "**/", "/**/*", "*.y*ml", "*.[y]aml", "**/*.y?ml", "*ml", "?*", "*.yaml  "],
)
def test_other_spellings_are_caught_by_the_probes(pattern: str) -> None:
    (rule,) = read_rules(pattern)
    assert is_denied(rule)
    assert parse_ignore_file(pattern).denied == (DeniedPattern(1, rule.pattern),)


@pytest.mark.parametrize(
    "pattern", ["!*", "!*.yaml", "docs/", "*.json", "\\*.yaml", "**/a.yaml", "a/**", "*.YAML"]
)
def test_not_denied(pattern: str) -> None:
    (rule,) = read_rules(pattern)
    assert not is_denied(rule)
    assert parse_ignore_file(pattern).denied == ()


# -- hostile patterns: a pull request writes this file -----------------------------------

# The red-team cases: on a backtracking matcher ``a*a*a*a*a*a*a*a*b`` against 60 ``a`` took
# seconds and 250 never finished. Each runs in a child process under a generous timeout, so
# a regression fails the test instead of hanging the suite.
HOSTILE_CASES = [
    ("a*a*a*a*a*a*a*a*b", "a" * 60, False),
    ("a*a*a*a*a*a*a*a*b", "a" * 250, False),
    ("a*a*a*a*a*a*a*a*b", "a" * 4096, False),
    ("/**/a*a*a*a*a*a*/**/b", "/".join(["a" * 40] * 100), False),
    ("**/*a*a*a*a*a*a*a*a*a*a*a*a*b", "a" * 4096, False),
    ("**/*a*a*a*a*a*a*a*a*a*a*a*a*?", "a" * 4096, True),
    ("[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[0-9]", "x" * 4096, False),
    ("**/a/**/a/**/a/**/a/**/a/**/a/**/b", "/".join(["a"] * 2000), False),
]


def test_hostile_patterns_finish() -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from bot.ignore.rules import IgnoreMatcher, read_rules\n"
        "for line in sys.stdin.read().splitlines():\n"
        "    pattern, path = line.split('\\t')\n"
        "    print(IgnoreMatcher(read_rules(pattern)).is_ignored(path))\n"
    )
    cases = "".join(f"{pattern}\t{path}\n" for pattern, path, _ in HOSTILE_CASES)
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=cases,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.split() == [str(expected) for _, _, expected in HOSTILE_CASES]


def test_hostile_patterns_still_match_what_they_should() -> None:
    assert matcher("a*a*a*a*a*a*a*a*b\n").is_ignored("a" * 250 + "b")
    assert matcher("/**/a*a*a*a*a*a*/**/b\n").is_ignored("/".join(["a" * 40] * 100) + "/b")
    assert matcher("**/a/**/a/**/b\n").is_ignored("/".join(["a"] * 2000) + "/b")


def test_directories_thousands_deep() -> None:
    deep = "/".join(["d"] * 3000)
    m = matcher("/d/d/d/\n!x\n")
    assert m.rule_for(deep + "/f") == IgnoreRule(1, "/d/d/d/", negated=False)
    assert not matcher("/e/\n").is_ignored(deep + "/f")
