"""Where a change may write, and which /ignore patterns may be added."""

from __future__ import annotations

import pytest

from bot.changes.safety import anchored, ignore_pattern_problem, written_path_problem
from bot.ignore.rules import parse_ignore_file

ROOT = "clusters/prod"
MANAGED = ["clusters/prod/v1/configmaps/web/settings.yaml", "clusters/prod/kustomization.yaml"]


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("clusters/prod/machines/node-1.yaml", None),
        ("/etc/passwd", "not a relative"),
        ("clusters/prod/../staging/x.yaml", "'..'"),
        ("clusters/prod/.git/config", ".git"),
        ("clusters/prod/.GIT/hooks/pre-commit", ".git"),
        ("clusters/staging/x.yaml", "outside the target"),
        ("clusters/prod2/x.yaml", "outside the target"),
        ("clusters/prod/notes/x.yaml", "ignored"),
        ("clusters/prod//x.yaml", "empty"),
        ("clusters/prod/a\nb.yaml", "not a relative"),
    ],
)
def test_written_paths(path: str, why: str | None) -> None:
    ignore = parse_ignore_file("/notes/\n").matcher
    got = written_path_problem(path, ROOT, ignore)
    assert (got is None) if why is None else (got is not None and why in got), got


def test_patterns_are_anchored_at_the_target_root() -> None:
    assert anchored("notes.txt") == "/notes.txt"
    assert anchored("/notes.txt") == "/notes.txt"
    assert anchored("docs/*.md") == "docs/*.md"  # a slash inside anchors already
    assert anchored("build/") == "/build/"


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("notes.txt", None),
        ("docs/", None),
        ("*", "every file"),
        ("**", "every file"),
        ("*.yaml", "every file"),
        ("v1/", "shadow"),
        ("kustomization.yaml", "shadow"),
        ("!keep.txt", "'!'"),
        ("#comment", "'!'"),
        ("", "empty"),
        ("a\x1bb", "control"),
    ],
)
def test_ignore_patterns(pattern: str, why: str | None) -> None:
    got = ignore_pattern_problem(pattern, "", MANAGED, ROOT)
    assert (got is None) if why is None else (got is not None and why in got), got


def test_an_existing_negation_is_honoured() -> None:
    # The existing file re-includes settings.yaml after the new pattern? Order matters:
    # the new line comes last, so it wins over earlier lines.
    existing = "!v1/configmaps/web/settings.yaml\n"
    assert ignore_pattern_problem("v1/configmaps/", existing, MANAGED, ROOT) is not None
