"""A configured target path that holds nothing is a warning, the first thing every format shows,
and it says plainly why: the path does not exist at that revision (with the nearest directory
when one is close: a typo), or, on disk, it is an empty directory."""

from __future__ import annotations

import pytest

from tests.conftest import MakeRepo, RunCli

CONFIG = "version: 1\ntargets:\n  - {name: prod, path: clusters/prodd}\n"
FILES = {"clusters/prod/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_empty_target_is_a_warning_shown_first(
    fmt: str, make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo(FILES, config=CONFIG)
    result = run_cli("check", str(repo), "--rev", "HEAD", "--format", fmt)
    assert result.code == 0, result.err  # a warning never refuses
    if fmt == "text":
        lines = result.out.splitlines()
        verdict = next(i for i, line in enumerate(lines) if line.startswith("ACCEPTED  prod"))
        assert lines[verdict].endswith("0 errors, 1 warning")
        assert lines[verdict + 2].startswith("  empty-target (1):")
        assert lines[verdict + 3] == (
            "    clusters/prodd  clusters/prodd does not exist at this revision; "
            "did you mean 'clusters/prod'?"
        )
    elif fmt == "json":
        (target,) = result.json()["targets"]
        first = target["issues"][0]
        assert (first["kind"], first["severity"]) == ("empty-target", "warning")
        assert first["path"] == "clusters/prodd"
    else:
        first = result.json()["runs"][0]["results"][0]
        assert (first["ruleId"], first["level"]) == ("empty-target", "warning")


def test_a_target_path_that_is_a_file_stays_an_error(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo({"t": "x\n"})
    result = run_cli("check", str(repo), "--rev", "HEAD", "--format", "json")
    (target,) = result.json()["targets"]
    assert [i["kind"] for i in target["issues"]] == ["foreign-file"]
    assert result.code == 1


def test_the_directory_on_disk_gives_the_same_warning(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo(FILES, config=CONFIG)
    (repo / "clusters" / "prodd" / "later").mkdir(parents=True)  # empty directories: no entry
    result = run_cli("check", str(repo), "--format", "json")
    (target,) = result.json()["targets"]
    assert [(i["kind"], i["message"]) for i in target["issues"]] == [
        (
            "empty-target",
            "clusters/prodd is an empty directory; nothing to check until files arrive",
        )
    ]


def test_a_path_missing_on_disk_says_so_without_a_revision(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo(FILES, config="version: 1\ntargets:\n  - {name: web, path: apps/web}\n")
    result = run_cli("check", str(repo), "--format", "json")
    (target,) = result.json()["targets"]
    (issue,) = target["issues"]
    assert issue["message"] == (
        "apps/web does not exist; is the target's path right, or is the target not "
        "bootstrapped yet?"
    )
