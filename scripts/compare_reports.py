"""Compare the JSON reports of this tree's gate with those of an earlier revision's.

A reorganisation must change no verdict: run this before landing one.

    python scripts/compare_reports.py REV [DIR ...]

Each DIR (default: every ``tree/`` of ``../shared/corpora``) is checked as one ad-hoc target
(``--path .``) by the code at REV (``git archive`` of ``bot/`` into a temporary folder, run
with the same interpreter) and by the code of this working tree. Exit 0 when every pair of
reports is byte-identical, 1 otherwise. For a pair that differs, the issues only one side has
are listed by kind (``+`` new, ``-`` gone), with a few of their paths.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT.parent / "shared" / "corpora"
_RUN = "import sys; from bot.cli.main import main; sys.exit(main(sys.argv[1:]))"


def report(code: Path, tree: Path, out: Path) -> bytes:
    argv = ["check", str(tree), "--path", ".", "--format", "json", "-o", str(out)]
    # Run inside ``code``: ``python -c`` puts the working directory first on the path, so
    # run from this checkout both sides would import this checkout's ``bot/`` and every
    # comparison would say "identical".
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, *argv],
        env={"PYTHONPATH": str(code), "PATH": "/usr/bin:/bin"},
        cwd=code,
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
            if not same:
                for line in differences(json.loads(before), json.loads(after)):
                    print("    " + line)
    return 1 if differ else 0


Issue = tuple[str, str, str, int | None, str]  # target, kind, path, line, message
_SHOWN_PATHS = 3


def _issues(report: Any) -> Counter[Issue]:
    found: Counter[Issue] = Counter()
    for target in report.get("targets", []):
        for i in target["issues"]:
            found[(target["name"], i["kind"], i["path"], i["line"], i["message"])] += 1
    return found


def differences(before: Any, after: Any) -> list[str]:
    """The issues only one report has, grouped by sign and kind, a few paths each; then any
    other change (a verdict, the counts) named by target."""
    old, new = _issues(before), _issues(after)
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for sign, side, other in (("+", new, old), ("-", old, new)):
        for issue in (side - other).elements():
            groups[(sign, issue[1])].append(f"{issue[2]}:{issue[3] or ''}")
    lines = []
    for (sign, kind), paths in sorted(groups.items()):
        shown = ", ".join(paths[:_SHOWN_PATHS]) + (" ..." if len(paths) > _SHOWN_PATHS else "")
        lines.append(f"{sign}{len(paths)} {kind}: {shown}")
    old_targets = {t["name"]: t for t in before.get("targets", [])}
    for target in after.get("targets", []):
        was = old_targets.get(target["name"], {})
        for key in ("verdict", "counts"):
            if was.get(key) != target.get(key):
                lines.append(f"{target['name']}: {key} {was.get(key)} -> {target.get(key)}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
