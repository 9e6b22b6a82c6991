"""Shared test helpers: real git repositories in temp dirs, the CLI in-process, named fixtures."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.cli.demo import build_repository
from bot.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"
ONE_TARGET = "version: 1\ntargets:\n  - {name: t, path: t}\n"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "needs_shared: reads ../shared (the corpora, every recorded payload, the whole API "
        "descriptions); skipped when it is not beside the clone, a failure under CI=true",
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_shared") is None or SHARED.is_dir():
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{SHARED} is missing: CI runs with ../shared beside the clone")
    pytest.skip(f"needs {SHARED}, which is not beside this clone")


def load_fixture(name: str) -> Any:
    """A recorded fixture by name: ``gate/structural_inputs.yaml`` or ``....json``."""
    path = FIXTURES / name
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


RunCli = Callable[..., CliResult]
MakeRepo = Callable[..., Path]


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> RunCli:
    def run(*args: str) -> CliResult:
        code = main(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def make_repo(tmp_path: Path) -> MakeRepo:
    counter = iter(range(1_000_000))

    def make(
        files: Mapping[str, bytes | str],
        *,
        symlinks: Mapping[str, str] | None = None,
        gitlinks: Mapping[str, str] | None = None,
        config: str | None = ONE_TARGET,
    ) -> Path:
        blobs = {p: d.encode() if isinstance(d, str) else d for p, d in files.items()}
        if config is not None:
            blobs.setdefault(".ichor.yaml", config.encode())
        repo = tmp_path / f"repo{next(counter)}"
        build_repository(repo, blobs, symlinks=symlinks, gitlinks=gitlinks)
        return repo

    return make


@pytest.fixture
def deep_tmp(tmp_path: Path) -> Iterator[Path]:
    """A temp dir for trees thousands of levels deep, removed by the test itself.

    pytest removes old temp dirs with ``shutil.rmtree``, which recurses once per level: such a
    tree left behind stops a later session with ``RecursionError``. GNU ``rm`` does not recurse.
    """
    root = tmp_path / "deep"
    root.mkdir()
    yield root
    subprocess.run(["rm", "-rf", "--", str(root)], check=True)


def make_deep_dirs(top: Path, *parts: str) -> str:
    """``top/parts...`` made one level at a time (``os.makedirs`` recurses); its path."""
    deep = os.path.join(top, *parts)
    for end in range(len(str(top)) + 1, len(deep) + 1):
        if end == len(deep) or deep[end] == "/":
            os.mkdir(deep[:end])
    return deep
