"""The package as a release ships it: one version, a changelog, and an sdist and a wheel from
``python -m build`` that install into a fresh environment and run on the demo repository.

Tests reach nothing but loopback, so nothing here may download: the build runs with
``--no-isolation`` (the build backend is in the dev extras), and each fresh venv is made without
pip and given this environment's site-packages through a ``.pth`` file, then the wheel or sdist
is installed into it with ``--no-deps --no-index``. The project itself is imported from the
fresh venv (asserted): the editable install's finder in those site-packages is never loaded,
since a directory named in a ``.pth`` file is added to ``sys.path`` without reading its own
``.pth`` files. Every step has a timeout; the whole runs in seconds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

import bot
from tests.conftest import ROOT

pytestmark = pytest.mark.packaging
_STEP_TIMEOUT = 180  # seconds: one build or install; they take a few on this machine
# What the source tree holds that the package is built from.
_SOURCES = ("bot", "workers", "pyproject.toml", "README.md", "CHANGELOG.md")
# Files the bot reads at run time from its package data: a wheel without them installs fine
# and then fails (a page without templates, a gate without its built-in types).
_PACKAGE_DATA = (
    "bot/py.typed",
    "bot/web/templates/base.html",
    "bot/web/static/status.css",
    "bot/registry/builtin_types.json",
)


def _offline() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=_offline(),
        capture_output=True,
        text=True,
        timeout=_STEP_TIMEOUT,
        check=False,
    )


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


@dataclass(frozen=True)
class Built:
    wheel: Path
    sdist: Path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """``python -m build`` on a copy of the working tree (tracked and new files), so the
    checkout gets no build/ or egg-info of its own."""
    work = tmp_path_factory.mktemp("build")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", *_SOURCES],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    source = work / "src"
    for name in filter(None, listed.decode().split("\0")):
        if (ROOT / name).is_file():  # a file deleted but not yet staged is listed too
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    out = work / "dist"
    _ok(_run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, source, cwd=work))
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return Built(wheel, sdist)


@pytest.fixture
def fresh_venv(tmp_path: Path) -> Iterator[Path]:
    """A venv with no pip and no project, this environment's dependencies visible to it."""
    venv = tmp_path / "venv"
    _ok(_run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path))
    python = venv / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = _ok(_run(python, "-c", purelib, cwd=tmp_path))
    ours = sysconfig.get_paths()["purelib"]
    Path(site.strip(), "ichor-dependencies.pth").write_text(ours + "\n")
    yield venv


def _install(venv: Path, artifact: Path, cwd: Path) -> None:
    # This environment's pip installs into the fresh one (pip's --python); an sdist is built
    # there by the setuptools it sees through the .pth file.
    pip: list[str | Path] = [sys.executable, "-m", "pip", "--python", venv / "bin" / "python"]
    _ok(
        _run(
            *pip,
            "install",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "-q",
            artifact,
            cwd=cwd,
        )
    )


def _installed_from(venv: Path, cwd: Path) -> Path:
    where = _ok(_run(venv / "bin" / "python", "-c", "import bot; print(bot.__file__)", cwd=cwd))
    return Path(where.strip())


def test_the_version_has_one_source() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "bot.__version__"}
    assert metadata.version("ichor-bot") == bot.__version__  # as installed here (editable)
    assert re.fullmatch(r"\d+\.\d+\.\d+", bot.__version__)


def test_the_changelog_keeps_a_changelog() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert headings and headings[0] == "Unreleased"
    current = tuple(int(part) for part in bot.__version__.split("."))
    for version in headings[1:]:  # released versions, newest first, none newer than this one
        assert tuple(int(part) for part in version.split(".")) <= current
    unreleased = text.split("## [Unreleased]", 1)[1].split("\n## [", 1)[0]
    assert re.findall(r"^### (Added|Changed|Fixed|Security)$", unreleased, re.M)


def test_the_wheel_carries_its_data_and_version(built: Built) -> None:
    assert built.wheel.name == f"ichor_bot-{bot.__version__}-py3-none-any.whl"
    assert built.sdist.name == f"ichor_bot-{bot.__version__}.tar.gz"
    names = set(zipfile.ZipFile(built.wheel).namelist())
    assert set(_PACKAGE_DATA) <= names
    assert not any(n.startswith(("tests/", "fixtures/")) for n in names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    scripts = zipfile.ZipFile(built.wheel).read(entry_points).decode()
    assert "ichor-bot = bot.cli.main:main" in scripts


def test_the_wheel_installs_and_checks_the_demo(
    built: Built, fresh_venv: Path, tmp_path: Path
) -> None:
    _install(fresh_venv, built.wheel, tmp_path)
    assert _installed_from(fresh_venv, tmp_path).is_relative_to(fresh_venv)
    cli = fresh_venv / "bin" / "ichor-bot"
    assert _ok(_run(cli, "--version", cwd=tmp_path)) == f"ichor-bot {bot.__version__}\n"
    # The demo as `make run` builds it, by the installed package's own demo module.
    demo = tmp_path / "demo"
    shutil.copytree(ROOT / "fixtures/demo/tree", demo / "tree")
    _ok(_run(fresh_venv / "bin" / "python", "-m", "bot.cli.demo", demo, cwd=tmp_path))
    checked = _run(cli, "check", demo / "repo", "--rev", "HEAD", cwd=tmp_path)
    assert checked.returncode == 1, checked.stderr  # the demo's staging target is refused
    assert "ACCEPTED  prod (clusters/prod): 0 errors" in checked.stdout
    assert "REFUSED  staging (clusters/staging)" in checked.stdout
    assert "1 of 2 target(s) accepted" in checked.stdout


def test_the_sdist_installs(built: Built, fresh_venv: Path, tmp_path: Path) -> None:
    _install(fresh_venv, built.sdist, tmp_path)
    assert _installed_from(fresh_venv, tmp_path).is_relative_to(fresh_venv)
    version = _run(fresh_venv / "bin" / "ichor-bot", "--version", cwd=tmp_path)
    assert _ok(version) == f"ichor-bot {bot.__version__}\n"
