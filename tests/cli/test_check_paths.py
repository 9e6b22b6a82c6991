"""Which targets the paths given to ``check`` select, and where their repository is."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.check_paths import CheckScope, locate, select_targets
from bot.errors import UsageError
from bot.gate.policy import TargetPolicy

TARGETS = (
    TargetPolicy("prod", "clusters/prod", capabilities="caps/prod.txt"),
    TargetPolicy("prod2", "clusters/prod2"),
    TargetPolicy("dev", "clusters/dev"),
)


def names(paths: list[str]) -> tuple[list[str], list[str]]:
    selection = select_targets(TARGETS, paths, paths)
    return [t.name for t in selection.targets], list(selection.skipped)


def test_a_file_selects_the_target_holding_it() -> None:
    assert names(["clusters/prod/a.yaml"]) == (["prod"], [])
    assert names(["clusters/prod2/x/y.yaml", "clusters/prod/a"]) == (["prod", "prod2"], [])


def test_a_directory_selects_every_target_under_it() -> None:
    assert names(["clusters"]) == (["prod", "prod2", "dev"], [])
    assert names([""]) == (["prod", "prod2", "dev"], [])


def test_configuration_files_select_what_they_configure() -> None:
    assert names([".ichor.yaml"]) == (["prod", "prod2", "dev"], [])
    assert names(["caps/prod.txt"]) == (["prod"], [])


def test_paths_in_no_target_are_skipped() -> None:
    assert names(["README.md", "clusters/pro", "clusters/dev/a"]) == (
        ["dev"],
        ["README.md", "clusters/pro"],
    )


def test_locate_finds_the_root_by_walking_up(tmp_path: Path) -> None:
    (tmp_path / ".ichor.yaml").write_text("version: 1\n")
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert locate([], tmp_path) == CheckScope(".", None)  # the root itself: the whole repository
    assert locate(["a/.."], tmp_path) == CheckScope("a/..", None)
    assert locate(["."], tmp_path / "a") == CheckScope(str(tmp_path), ("a",), (".",))
    assert locate([str(tmp_path)], Path("/")) == CheckScope(str(tmp_path), None)
    inner = locate(["b/c.yaml", "../x"], tmp_path / "a")
    assert inner == CheckScope(str(tmp_path), ("a/b/c.yaml", "x"), ("b/c.yaml", "../x"))
    with pytest.raises(UsageError, match="outside the repository"):
        locate(["b", "/"], tmp_path / "a")


def test_locate_without_a_repository(tmp_path: Path) -> None:
    # One directory keeps its old meaning, so its own errors say what is missing.
    assert locate([str(tmp_path)], tmp_path) == CheckScope(str(tmp_path), None)
    (tmp_path / "f.yaml").write_text("a: 1\n")
    with pytest.raises(UsageError, match="is in no repository"):
        locate([str(tmp_path / "f.yaml")], tmp_path)
    # What does not exist is said first: it is the mistake, not the missing repository.
    with pytest.raises(UsageError, match=r"g\.yaml: no such file or directory"):
        locate([str(tmp_path / "g.yaml")], tmp_path)
