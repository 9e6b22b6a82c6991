"""The fixes about what kustomize builds, pasted into bash as printed, work: the target is then
accepted, and what kustomize builds from the folders that list the changed ones is unchanged.

Each case is a fix case of fixtures/gate/fix_cases.yaml; its commands are taken from the SARIF
report's ``properties.fix``, the fix every renderer shows. Rendering needs kubectl.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MakeRepo, RunCli
from tests.gate.test_fix_cases import CASES, sarif_fixes

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
# Where each printed fix's command starts: what comes before it is prose.
COMMANDS = ("kubectl kustomize ", "git rm ")


def _check(repo: Path, run_cli: RunCli) -> tuple[int, dict[str, Any]]:
    result = run_cli("check", str(repo), "--rev", "HEAD", "--format", "sarif")
    return result.code, json.loads(result.out)


def _built(repo: Path, folder: str) -> str:
    done = subprocess.run(
        [str(KUBECTL), "kustomize", folder], cwd=repo, capture_output=True, text=True, check=True
    )
    return done.stdout


def _commands(fixes: dict[str, str]) -> list[str]:
    found = []
    for fix in fixes.values():
        starts = [fix.find(c) for c in COMMANDS if c in fix]
        if starts:
            found.append(fix[min(starts) :])
    return found


def _paste(repo: Path, commands: list[str]) -> None:
    for command in commands:
        subprocess.run(["bash", "-c", command], cwd=repo, check=True, capture_output=True)
    subprocess.run(["git", "-C", str(repo), "add", "--all"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "--quiet", "-m", "pasted"], check=True)


@pytest.mark.parametrize(
    ("name", "pasted", "unchanged", "left"),
    [
        # Item 11: render web/; apps/ lists web/ and still builds the same objects.
        ("kustomize-render-fix", 1, "t/apps", []),
        # Item 8: the generator's inputs are freed by rendering the kustomization that reads
        # them; the foreign file nothing reads keeps its own (git rm) fix.
        ("kustomize-generator-input-fix", 1, "t/app", ["t/notes.txt"]),
        # Item 9: each orphan copy is removed; apps/ never built them. Folders without a
        # kustomization do not tell which of their copies is meant.
        ("duplicate-identity-orphan-fix", 3, "t/apps", ["t/flat/a.yaml", "t/flat/b.yaml"]),
        # Issue 22 item 2: a transformer's configuration, not-followable as an object, is
        # freed by rendering the kustomization whose transformers read it.
        ("transformer-config-is-build-input", 1, "t", []),
    ],
)
def test_pasted_fixes_are_accepted_and_build_the_same(
    name: str, pasted: int, unchanged: str, left: list[str], make_repo: MakeRepo, run_cli: RunCli
) -> None:
    case = CASES[name]
    repo = make_repo({path: data.encode() for path, data in case["files"].items()})
    before = _built(repo, unchanged)
    code, sarif = _check(repo, run_cli)
    assert code == 1
    commands = _commands(sarif_fixes(sarif))
    assert len(commands) == pasted
    # Fixes other than these name no command to paste: they point at the one that does.
    _paste(repo, commands)

    code, sarif = _check(repo, run_cli)
    results = sarif["runs"][0]["results"]
    where = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
    assert where == left, [r["message"]["text"] for r in results]
    assert code == (1 if left else 0)
    assert _built(repo, unchanged) == before


def test_an_unlisted_foreign_file_keeps_the_usual_fix(make_repo: MakeRepo, run_cli: RunCli) -> None:
    case = CASES["kustomize-generator-input-fix"]
    repo = make_repo({path: data.encode() for path, data in case["files"].items()})
    text = run_cli("check", str(repo), "--rev", "HEAD").out
    # The text report removes only what nothing reads; the generator's inputs get their own fix.
    assert "    fix: git rm -r -- t/notes.txt\n" in text
    assert "    fix: The configMapGenerator of t/app/kustomization.yaml reads this file" in text
