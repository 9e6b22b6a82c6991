"""``check``'s own errors say what is wrong, and the formats a person reads count alike
(issue 21 item 13): a path that does not exist, a configuration staged but not committed, and
"errors" and "warnings" in text, github and brief."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import MakeRepo, RunCli

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: x}\n"
CONFIG = "version: 1\ntargets:\n  - {name: t, path: t}\n"


def test_a_path_that_does_not_exist_says_so(tmp_path: Path, run_cli: RunCli) -> None:
    missing = str(tmp_path / "does" / "not" / "exist")
    for extra in ((), ("--rev", "HEAD"), ("--path", "t"), ("--rev", "HEAD", "--path", "t")):
        result = run_cli("check", missing, *extra)
        assert (result.code, result.out) == (2, ""), extra
        assert result.err == f"ichor-bot: error: {missing}: no such file or directory\n", extra


def test_a_path_in_no_repository_still_says_that(tmp_path: Path, run_cli: RunCli) -> None:
    (tmp_path / "f.yaml").write_text("a: 1\n")
    result = run_cli("check", str(tmp_path / "f.yaml"))
    assert result.code == 2 and "is in no repository" in result.err


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_a_configuration_staged_but_not_committed_says_so(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo({"t/a.yaml": CM % "a"}, config=None)
    (repo / ".ichor.yaml").write_text(CONFIG)
    untracked = run_cli("check", str(repo), "--rev", "HEAD")
    assert untracked.code == 2
    assert untracked.err == (
        "ichor-bot: error: no .ichor.yaml at HEAD: the one on disk is not committed; commit "
        "it, or leave out --rev to check the files on disk\n"
    )
    _git(repo, "add", ".ichor.yaml")
    staged = run_cli("check", str(repo), "--rev", "HEAD")
    assert staged.code == 2
    assert staged.err == (
        "ichor-bot: error: no .ichor.yaml at HEAD: it is staged but not committed; commit "
        "it, or leave out --rev to check the files on disk\n"
    )
    assert run_cli("check", str(repo)).code == 0  # the files on disk have it


def test_no_configuration_at_a_revision_names_the_revision(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo({"t/a.yaml": CM % "a"}, config=None)
    result = run_cli("check", str(repo), "--rev", "HEAD")
    assert result.code == 2
    assert result.err.startswith(f"ichor-bot: error: no .ichor.yaml in {repo} at HEAD; add one")


def test_text_github_and_brief_count_errors_and_warnings_alike(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    files = {
        "t/a.yaml": CM % "a",
        "t/x.txt": "x",
        "t/y.txt": "y",
        "t/.gittargetignore": "/never/\n",  # a pattern matching nothing: a warning
    }
    repo = str(make_repo(files))
    verdict = "REFUSED  t (t): 2 errors, 1 warning"
    text = run_cli("check", repo, "--rev", "HEAD").out.splitlines()
    assert verdict in text
    github = run_cli("check", repo, "--rev", "HEAD", "--format", "github").out.splitlines()
    assert verdict in github
    brief = run_cli("check", repo, "--rev", "HEAD", "--format", "brief").out.splitlines()
    assert brief == [
        "t/.gittargetignore:1: unused-ignore-pattern: warning: pattern '/never/' matches "
        "no entry of the target",
        "t/x.txt: foreign-file: not YAML, a build directive, an operator artifact or a benign "
        "passenger",
        "t/y.txt: foreign-file: not YAML, a build directive, an operator artifact or a benign "
        "passenger",
    ]
    clean = str(make_repo({"t/a.yaml": CM % "a"}))
    for fmt in ("text", "github"):
        out = run_cli("check", clean, "--rev", "HEAD", "--format", fmt).out
        assert "ACCEPTED  t (t): 0 errors" in out.splitlines(), fmt


def test_configuration_errors_are_counted_as_errors(
    make_repo: MakeRepo, run_cli: RunCli, tmp_path: Path
) -> None:
    config = "version: 2\ntargets:\n  - {name: t, path: t, mode: lax}\n"
    repo = str(make_repo({"t/a.yaml": CM % "a"}, config=config))
    out = tmp_path / "report.txt"
    result = run_cli("check", repo, "--rev", "HEAD", "-o", str(out))
    assert result.code == 2
    assert out.read_text().splitlines()[1] == "CONFIGURATION ERROR  2 errors in .ichor.yaml:"
    assert [line.split(": ")[1] for line in result.err.splitlines()] == ["error", "error"]
