"""Plain words, line numbers and near-miss suggestions for ``.ichor.yaml`` problems."""

from __future__ import annotations

import yaml

from bot.config.messages import did_you_mean, line_of, plain_message
from bot.config.schema import parse_config


def test_did_you_mean() -> None:
    allowed = ("version", "targets", "commands")
    assert did_you_mean("target", allowed) == "; did you mean 'targets'?"
    assert did_you_mean("Targets", allowed) == "; did you mean 'targets'?"
    assert did_you_mean("verison", allowed) == "; did you mean 'version'?"
    assert did_you_mean("zzz", allowed) == ""
    assert did_you_mean(3, allowed) == ""
    assert did_you_mean("t" * 10_000, allowed) == ""  # bounded work on hostile keys


def test_plain_message() -> None:
    assert plain_message("string_type", "Input should be a valid string", {}) == "must be text"
    assert plain_message("literal_error", "x", {"expected": "1"}) == "must be 1"
    assert plain_message("too_short", "x", {"min_length": 1}) == "must have at least 1 entry"
    assert plain_message("other", "Input should be odd", None) == "must be odd"


def test_line_of() -> None:
    root = yaml.compose("version: 1\ntargets:\n  - name: a\n    path: b\n  - {name: c}\n")
    assert line_of(root, ("targets", 0, "path")) == 4
    assert line_of(root, ("targets", 1, "path")) == 5  # missing: its mapping's line
    assert line_of(root, ("nothing",)) == 1
    assert line_of(None, ("targets",)) is None


def test_issues_carry_lines() -> None:
    result = parse_config(b"version: 1\ntargets:\n  - name: t\n    path: t\n    mdoe: strict\n")
    (issue,) = result.issues
    assert issue.kind == "unknown-key" and issue.line == 5
    assert "did you mean 'mode'?" in issue.message
    duplicate = parse_config(b"version: 1\nversion: 1\n")
    # The missing 'targets' is said too (line 1, first): a key written twice hides nothing.
    assert [(i.kind, i.line) for i in duplicate.issues] == [("missing-key", 1), ("invalid-yaml", 2)]


def test_cross_target_issues_carry_lines() -> None:
    text = b"version: 1\ntargets:\n  - {name: a, path: x}\n  - name: a\n    path: x/y\n"
    lines = {i.kind: i.line for i in parse_config(text).issues}
    assert lines == {"duplicate-target-name": 4, "overlapping-target-paths": 5}
