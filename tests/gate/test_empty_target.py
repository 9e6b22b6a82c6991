"""A configured target path that holds nothing is a warning, the first thing every format shows."""

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
        assert "no entries under clusters/prodd; is the path right?" in lines[verdict + 3]
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
    (repo / "clusters" / "prodd").mkdir()  # an empty directory is still no entry
    result = run_cli("check", str(repo), "--format", "json")
    (target,) = result.json()["targets"]
    assert [i["kind"] for i in target["issues"]] == ["empty-target"]
