"""scripts/compare_reports.py: with bot/ as committed, HEAD's reports are byte-identical."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES, ROOT

SCRIPT = ROOT / "scripts/compare_reports.py"


def test_head_against_itself_is_identical() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts/compare_reports.py"),
            "HEAD",
            str(FIXTURES / "demo/tree"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    clean = subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", "HEAD", "--", "bot"])
    if clean.returncode == 0:  # uncommitted work on the gate may change a report on purpose
        assert proc.returncode == 0 and proc.stdout.startswith("identical  "), proc.stdout


def test_each_side_runs_the_code_it_names(tmp_path: Path) -> None:
    """Run from this checkout, both sides once imported this checkout's ``bot/`` (``python
    -c`` puts the working directory first on the path): every comparison said identical."""
    spec = importlib.util.spec_from_file_location("compare_reports", SCRIPT)
    assert spec is not None and spec.loader is not None
    compare_reports = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare_reports)
    stub = tmp_path / "code" / "bot" / "cli"
    stub.mkdir(parents=True)
    (stub.parent / "__init__.py").write_text("")
    (stub / "__init__.py").write_text("")
    (stub / "main.py").write_text(
        "def main(argv):\n    open(argv[argv.index('-o') + 1], 'w').write('the stub ran')\n"
        "    return 0\n"
    )
    out = tmp_path / "report.json"
    got = compare_reports.report(tmp_path / "code", FIXTURES / "demo/tree", out)
    assert got == b"the stub ran"


def test_a_difference_is_listed_by_kind_with_its_paths() -> None:
    spec = importlib.util.spec_from_file_location("compare_reports", SCRIPT)
    assert spec is not None and spec.loader is not None
    compare_reports = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare_reports)

    def report(*issues: tuple[str, str, int], verdict: str = "refused") -> dict[str, object]:
        listed = [{"kind": k, "path": p, "line": n, "message": "m"} for k, p, n in issues]
        return {"targets": [{"name": "t", "verdict": verdict, "counts": {}, "issues": listed}]}

    before = report(("foreign-file", "a.txt", 0), ("invalid-name", "b.yaml", 3))
    after = report(("invalid-name", "b.yaml", 3), ("invalid-name", "c.yaml", 6), verdict="x")
    assert compare_reports.differences(before, after) == [
        "+1 invalid-name: c.yaml:6",
        "-1 foreign-file: a.txt:",
        "t: verdict refused -> x",
    ]
