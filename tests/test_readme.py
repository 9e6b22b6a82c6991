"""The README: its sample output is what the CLI prints today (tests/test_docs.py checks its
links).

After a change of the gate's messages, ``python scripts/readme_sample.py --write`` rewrites
the samples; this test calls the same code.
"""

from __future__ import annotations

import importlib.util
import json
import re
from types import ModuleType

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "readme_sample", ROOT / "scripts" / "readme_sample.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sample_output_is_current() -> None:
    stale = _script().stale_blocks(README)
    assert not stale, (
        f"README.md samples {sorted(stale)} differ from what the CLI prints; "
        "run: python scripts/readme_sample.py --write"
    )


def test_rewrite_fills_a_stale_block() -> None:
    script = _script()
    emptied = re.sub(r"(<!-- sample:demo -->\n```console\n).*?(```)", r"\1\2", README, flags=re.S)
    assert "demo" in script.stale_blocks(emptied)
    assert script.rewrite(emptied) == README


def test_opens_with_a_quick_start() -> None:
    sections = re.findall(r"^## (.+)$", README, re.M)
    assert sections[0] == "Quick start"
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "version: 1\ntargets:\n  - {name: prod, path: clusters/prod}\n" in quick
    assert "$ ichor-bot check\n" in quick
    assert _script().QUICKSTART_CONFIG in quick  # the sample ran on the configuration shown


def test_names_the_kubernetes_version_of_the_builtin_types() -> None:
    provenance = json.loads((ROOT / "bot/registry/builtin_types.json").read_text())["provenance"]
    for source, count in provenance["counts"].items():
        version = source.rpartition("-")[2]
        assert f"Kubernetes {version}" in README, source
        assert str(count) in README


def test_install_pins_a_version() -> None:
    version = re.search(r'^version = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert version is not None
    assert f"@v{version.group(1)}" in README
    assert "git clone" in README and "make install" in README
