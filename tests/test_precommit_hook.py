"""The pre-commit hook ``ichor-check``, run by ``pre-commit try-repo`` on a GitOps repository.

The hook is ``language: python``: pre-commit installs this repository with pip into an
environment of its own. Tests run offline, so pip is given ``PIP_NO_INDEX`` and a wheelhouse
repacked from this environment (``tests/support/wheelhouse.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.support.wheelhouse import build_wheelhouse

PRE_COMMIT = Path(sys.executable).parent / "pre-commit"
CONFIG = "version: 1\ntargets:\n  - {name: prod, path: clusters/prod}\n"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n"


@pytest.fixture(scope="module")
def offline_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("pre-commit")
    return {
        **os.environ,
        "PRE_COMMIT_HOME": str(base / "home"),  # one hook environment for the whole module
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(build_wheelhouse(base / "wheels")),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def _gitops_repo(path: Path, files: dict[str, str]) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    subprocess.run(["git", "add", "--", *files], cwd=path, check=True)
    return path


def _try_repo(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PRE_COMMIT), "try-repo", str(ROOT), "ichor-check", "--color", "never"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_hook_is_declared() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "ichor-check"
    assert hook["entry"] == "ichor-bot check" and hook["language"] == "python"
    assert hook["pass_filenames"] is True and hook["require_serial"] is True


def test_try_repo_refuses_then_accepts(tmp_path: Path, offline_env: dict[str, str]) -> None:
    files = {
        ".ichor.yaml": CONFIG,
        "clusters/prod/a.yaml": CM,
        "clusters/prod/notes.txt": "x",
        "docs/guide.txt": "outside every target",
    }
    repo = _gitops_repo(tmp_path / "gitops", files)
    refused = _try_repo(repo, offline_env)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "ichor acceptance gate" in refused.stdout and "Failed" in refused.stdout
    assert "REFUSED  prod (clusters/prod): 1 error" in refused.stdout
    assert "skipped (in no target): docs/guide.txt" in refused.stdout
    subprocess.run(["git", "rm", "-q", "--cached", "clusters/prod/notes.txt"], cwd=repo, check=True)
    (repo / "clusters/prod/notes.txt").unlink()
    accepted = _try_repo(repo, offline_env)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "Passed" in accepted.stdout
