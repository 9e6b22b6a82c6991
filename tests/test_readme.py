"""The README and docs/: their sample output is what the CLI prints today, and docs/gate.md's
issue-code table is bot/gate/codes.py (tests/test_docs.py checks their links).

After a change of the gate's messages or codes, ``python scripts/readme_sample.py --write``
rewrites them; this test calls the same code.
"""

from __future__ import annotations

import importlib.util
import json
import re
from types import ModuleType

from bot.gate.codes import CODES
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
GATE = (ROOT / "docs" / "gate.md").read_text(encoding="utf-8")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "readme_sample", ROOT / "scripts" / "readme_sample.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sample_output_is_current() -> None:
    stale, missing = _script().stale_documents()
    assert not missing, f"no document holds the blocks {missing}"
    where = {str(path.relative_to(ROOT)): sorted(blocks) for path, blocks in stale.items()}
    assert not stale, (
        f"generated blocks differ from what the code makes now: {where}; "
        "run: python scripts/readme_sample.py --write"
    )


def test_rewrite_fills_a_stale_block() -> None:
    script = _script()
    emptied = re.sub(
        r"(<!-- sample:quickstart -->\n).*?(<!-- /sample)", r"\1\2", README, flags=re.S
    )
    assert "quickstart" in script.stale_blocks(emptied)
    assert script.rewrite(emptied) == README


def test_the_issue_code_table_is_codes_py() -> None:
    table = _script().render("issue-codes")
    rows = re.findall(r"^\| \[?`([a-z-]+)`(?:\]\(#([a-z-]+)\))? \| (\w+) \| ", table, re.M)
    assert [(code, severity) for code, _, severity in rows] == [
        (code.value, info.severity.value) for code, info in CODES.items()
    ]
    assert all(section for _, section, _ in rows)  # each links to the section explaining it
    assert "<!-- sample:issue-codes -->" in GATE
    assert "&#124;stringData" in table  # a '|' in a code span, as GitHub and the site read it


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
        assert f"Kubernetes {version}" in GATE, source
        assert str(count) in GATE


def test_install_works_from_a_clone_and_names_the_release_tag() -> None:
    from bot import __version__

    install = README.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    assert "git clone" in install and "pip install .\n" in install.replace("  ", "\n")
    assert "pip install -e ." in install and "make install" in install
    assert f"The version is `{__version__}`" in install
    assert f"A release will be the tag `v{__version__}`" in install  # the tag, as what it will be
