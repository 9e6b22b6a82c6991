"""``ichor-bot onboard --dry-run [PATH]`` as a user runs it, in a child process with no forge
settings and no credentials (issue 22 item 3): the files and the pull request's description,
for a directory or a revision."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.cli.demo import DEMO_GITLINKS, DEMO_SYMLINKS, build_repository, read_tree
from bot.onboarding.proposal_body import MARKER
from tests.conftest import FIXTURES
from tests.test_corpora import CORPORA

DEMO = FIXTURES / "demo" / "tree"


def dry_run(*args: str) -> subprocess.CompletedProcess[str]:
    # Nothing of the forge, the queue or the state: the preview must need none of it.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ICHOR_", "REDIS"))}
    return subprocess.run(
        [sys.executable, "-m", "bot", "onboard", "--dry-run", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )


def printed_files(out: str) -> dict[str, str]:
    """``==> path <==`` sections: each file, and the pull request under its own heading."""
    files: dict[str, str] = {}
    name = None
    for line in out.splitlines(keepends=True):
        if line.startswith("==> ") and line.rstrip().endswith(" <=="):
            name = line[4:].rstrip()[: -len(" <==")]
            files[name] = ""
        elif name is not None:
            files[name] += line
    return files


def unconfigured_demo() -> dict[str, bytes]:
    files = read_tree(DEMO)
    files.pop(".ichor.yaml")  # onboarding is for a repository without one
    return files


def test_the_demo_directory_without_its_configuration(tmp_path: Path) -> None:
    tree = tmp_path / "demo"
    for path, data in unconfigured_demo().items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_bytes(data)
    result = dry_run(str(tree))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    files = printed_files(result.stdout)
    body = files.pop(
        "pull request on ichor/bootstrap: ichor: guard this repository's GitTarget paths"
    )
    assert list(files) == [".ichor.yaml", "clusters/staging/README.md"]
    config = yaml.safe_load(files[".ichor.yaml"])
    assert [(t["name"], t["path"]) for t in config["targets"]] == [
        ("clusters-prod", "clusters/prod"),
        ("clusters-staging", "clusters/staging"),
    ]
    assert body.startswith(MARKER + "\n")
    assert "| `clusters-prod` | <code>clusters/prod</code> | accepted |" in body
    assert "| `clusters-staging` | <code>clusters/staging</code> | **refused**" in body
    assert "this preview ran without a forge" in body
    # With no --forge, the description gives every forge's way to require the check.
    assert "**GitHub**" in body and "**GitLab**" in body and "**Gitea and Forgejo**" in body


def test_a_revision_of_the_demo_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    build_repository(repo, unconfigured_demo(), symlinks=DEMO_SYMLINKS, gitlinks=DEMO_GITLINKS)
    (repo / "clusters" / "prod" / "uncommitted.txt").write_text("not in HEAD\n")
    result = dry_run(str(repo), "--rev", "HEAD", "--forge", "gitlab")
    assert result.returncode == 0, result.stderr
    body = result.stdout.split("<!-- ichor:onboarding -->")[1]
    # The committed symlink and submodule are seen; the uncommitted file is not.
    assert "<code>clusters/staging/current</code>" in body
    assert "<code>clusters/staging/vendor/charts</code>" in body
    assert "uncommitted.txt" not in result.stdout
    assert "**GitLab**" in body and "**GitHub**" not in body


def test_a_configured_tree_has_nothing_to_propose() -> None:
    result = dry_run(str(DEMO))
    assert result.returncode == 1
    assert result.stdout == ""
    assert "has .ichor.yaml already: nothing to propose" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["a", "b"],
        [".", "--installation", "42"],
        [".", "--branch", "main"],
    ],
)
def test_usage_errors(args: list[str]) -> None:
    result = dry_run(*args)
    assert result.returncode == 2
    assert result.stderr.startswith("ichor-bot: error: ")


@pytest.mark.needs_shared
def test_a_corpus() -> None:
    result = dry_run(str(CORPORA / "flux2-kustomize-helm-example" / "tree"))
    assert result.returncode == 0, result.stderr
    files = printed_files(result.stdout)
    config = yaml.safe_load(files[".ichor.yaml"])
    assert [t["path"] for t in config["targets"]] == [
        "apps",
        "clusters/production",
        "clusters/staging",
        "infrastructure",
    ]
    assert "clusters/production.capabilities.txt" in files
    assert "kustomizations" in files["clusters/production.capabilities.txt"]
    assert "- <code>clusters</code>: it merges environments" in result.stdout
