"""Compare the JSON reports of this tree's gate with those of an earlier revision's.

A reorganisation must change no verdict: run this before landing one.

    python scripts/compare_reports.py REV [DIR ...]

Each DIR (default: every ``tree/`` of ``../shared/corpora``) is checked as one ad-hoc target
(``--path .``) by the code at REV (``git archive`` of ``bot/`` into a temporary folder, run
with the same interpreter) and by the code of this working tree. Exit 0 when every pair of
reports is byte-identical, 1 otherwise.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT.parent / "shared" / "corpora"
_RUN = "import sys; from bot.cli.main import main; sys.exit(main(sys.argv[1:]))"


def report(code: Path, tree: Path, out: Path) -> bytes:
    argv = ["check", str(tree), "--path", ".", "--format", "json", "-o", str(out)]
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, *argv],
        env={"PYTHONPATH": str(code), "PATH": "/usr/bin:/bin"},
        # `python -c` puts its working directory first on sys.path: run from the repository
        # root, both sides would import this tree's bot/ and always compare equal.
        cwd=out.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{tree}: exit {proc.returncode}: {proc.stderr.strip()}")
    return out.read_bytes()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", help="the earlier revision (e.g. main, HEAD~3)")
    parser.add_argument("dirs", nargs="*", type=Path, help="trees to check (default: corpora)")
    args = parser.parse_args(argv)
    trees = args.dirs or sorted(p for p in CORPORA.glob("*/tree") if p.is_dir())
    if not trees:
        raise SystemExit(f"no trees given and none under {CORPORA}")
    differ = 0
    with tempfile.TemporaryDirectory() as scratch:
        old = Path(scratch, "old")
        old.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.rev, "bot"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        for n, tree in enumerate(trees):
            before = report(old, tree, Path(scratch, f"old-{n}.json"))
            after = report(ROOT, tree, Path(scratch, f"new-{n}.json"))
            same = before == after
            differ += not same
            verdict = "identical" if same else "DIFFERENT"
            print(f"{verdict}  {tree}  ({len(before):,} → {len(after):,} bytes)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
