"""``action.yml``: a composite action that installs from its own checkout and runs check twice.

The install step needs an index, so it is only read here; the two check steps are run with
bash as the runner would, their ``${{ }}`` expressions replaced by the values it would give.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT, MakeRepo

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"


def _action() -> dict[str, Any]:
    action: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text())
    return action


def test_installs_from_the_actions_own_checkout() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    install = action["runs"]["steps"][0]
    assert install["env"]["ICHOR_SOURCE"] == "${{ github.action_path }}"
    assert '"$ICHOR_SOURCE"' in install["run"] and "pip install" in install["run"]
    # Inputs reach scripts through the environment, never pasted into the script text.
    for step in action["runs"]["steps"]:
        assert "${{" not in step["run"]


def _expand(value: str, inputs: dict[str, str], runner_temp: Path) -> str:
    def one(match: re.Match[str]) -> str:
        expression = match.group(1).strip()
        if expression.startswith("inputs."):
            return inputs[expression.removeprefix("inputs.")]
        assert expression == "runner.temp", expression
        return str(runner_temp)

    return re.sub(r"\$\{\{(.*?)\}\}", one, value)


def _run_step(
    step: dict[str, Any], inputs: dict[str, str], tmp: Path, cwd: Path
) -> subprocess.CompletedProcess[str]:
    env = {key: _expand(value, inputs, tmp) for key, value in step["env"].items()}
    env["GITHUB_OUTPUT"] = str(tmp / "output")
    env["PATH"] = "/usr/bin:/bin"
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_steps_write_sarif_and_annotations(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo({"t/a.yaml": CM, "t/x.txt": "x"})
    venv_bin = tmp_path / "runner" / "ichor-bot" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "ichor-bot").symlink_to(Path(sys.executable).parent / "ichor-bot")
    action = _action()
    inputs = {name: spec["default"] for name, spec in action["inputs"].items()}
    _, sarif_step, github_step = action["runs"]["steps"]

    sarif = _run_step(sarif_step, inputs, tmp_path / "runner", repo)
    assert sarif.returncode == 0, sarif.stderr  # refused, but the report is there to upload
    report = json.loads((repo / "ichor.sarif").read_text())
    assert report["version"] == "2.1.0" and report["runs"][0]["results"]
    assert (tmp_path / "runner" / "output").read_text() == "sarif-file=ichor.sarif\n"

    annotations = _run_step(github_step, inputs, tmp_path / "runner", repo)
    assert annotations.returncode == 1  # the verdict fails the job
    assert annotations.stdout.splitlines()[-1].startswith("::error file=t/x.txt,title=")

    clean = make_repo({"t/a.yaml": CM})
    assert _run_step(github_step, inputs, tmp_path / "runner", clean).returncode == 0
    broken = {**inputs, "rev": "no-such-revision"}
    assert _run_step(sarif_step, broken, tmp_path / "runner", clean).returncode == 2


def test_the_workflow_example_uses_the_action() -> None:
    workflow = yaml.safe_load((ROOT / "deploy" / "ci" / "github-actions.yml").read_text())
    steps = workflow["jobs"]["gate"]["steps"]
    assert any(str(step.get("uses", "")).endswith("/ichor-bot@v0.1.0") for step in steps)
    assert any("upload-sarif" in str(step.get("uses", "")) for step in steps)
