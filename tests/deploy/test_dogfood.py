"""The bot's own deployment is a GitTarget path its gate accepts: ``ichor-bot check --rev
HEAD`` on a repository made from the files on disk (what is about to be committed), and on
this repository's own HEAD (in CI, the commit under test)."""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import ROOT, MakeRepo, RunCli

TARGET = "deploy/kubernetes"


def tree_on_disk() -> dict[str, bytes]:
    files = {".ichor.yaml": (ROOT / ".ichor.yaml").read_bytes()}
    for path in sorted((ROOT / TARGET).rglob("*")):
        if path.is_file():
            files[path.relative_to(ROOT).as_posix()] = path.read_bytes()
    return files


def test_the_deployment_on_disk_is_accepted(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo(tree_on_disk(), config=None)
    result = run_cli("check", str(repo), "--rev", "HEAD", "--format", "json")
    assert result.code == 0, result.out
    (target,) = result.json()["targets"]
    assert (target["name"], target["path"], target["verdict"]) == ("deploy", TARGET, "accepted")
    assert target["issues"] == []  # not even a warning
    counts = target["counts"]
    assert counts["foreign"] == 0 and counts["ignored"] == 1  # the Secret template
    assert counts["managed"] == 12 and counts["build-directive"] == 1


def test_the_secret_template_is_ignored_on_purpose(make_repo: MakeRepo, run_cli: RunCli) -> None:
    files = tree_on_disk()
    files[f"{TARGET}/.gittargetignore"] = b""
    repo = make_repo(files, config=None)
    result = run_cli("check", str(repo), "--rev", "HEAD", "--format", "json")
    assert result.code == 1
    (target,) = result.json()["targets"]
    assert {i["kind"] for i in target["issues"]} == {"plaintext-secret"}


def test_this_repository_head_is_accepted(run_cli: RunCli) -> None:
    inside = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--is-inside-work-tree"],
        capture_output=True,
        text=True,
        check=False,
    )
    if inside.stdout.strip() != "true":
        pytest.skip("not a git checkout: the test above checks the same files from disk")
    result = run_cli("check", str(ROOT), "--rev", "HEAD")
    assert result.code == 0, result.out + result.err
    assert f"\nACCEPTED  deploy ({TARGET}): 0 errors\n" in result.out
