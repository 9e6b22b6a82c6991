"""Compare ``make bench`` figures of an older revision's worktree with this tree's.

A reorganisation must not slow the bot down: run this before landing one.

    git worktree add --detach ../old REV && make -C ../old install
    .venv/bin/python scripts/bench_compare.py ../old [--pairs 3] [--only gate,check]

Each benchmark of ``bench/`` runs in one tree, then at once in the other (old, new, old,
new, ...), so both share whatever else loads the machine; each tree runs with its own
``.venv/bin/python``, from its own root, on the same inputs (``../shared/corpora`` of
each tree, which are the same folder for two worktrees side by side). The figures are read
from each bench's printed output. Printed: per figure the median of each side, the ratio
of the medians (new / old) and the range of the per-pair ratios. A figure marked ``(up)``
is better higher; ``WORSE`` marks a figure more than 10% worse in every pair.

Shorter runs than ``make bench``: the benches' own options where they have them, and two
reference timings of third-party tools left out (yamllint in ``bench_gate``, git
check-ignore in ``bench_ignore``'s adversarial cases), being the same code on both sides.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NUM = r"([0-9][0-9,]*\.?[0-9]*)"


def _patched(module: str, patch: str, argv: list[str]) -> list[str]:
    """``python -c``: import a bench, replace one reference timing, run its main."""
    code = (
        f"import sys; sys.path.insert(0, 'bench'); sys.argv = {[module, *argv]!r}\n"
        f"import {module} as b\n{patch}\nsys.exit(b.main())"
    )
    return ["-c", code]


def _find(text: str, pattern: str, group: int = 1) -> float:
    found = re.search(pattern, text, re.MULTILINE)
    if found is None:
        raise ValueError(f"not in the output: {pattern}")
    return float(found.group(group).replace(",", ""))


def _gate(out: str) -> dict[str, float]:
    figures: dict[str, float] = {}
    for corpus in ("sulibot-home-ops", "xunholy-k8s-gitops"):
        row = rf"^{corpus}\s+"
        figures[f"{corpus} full gate ms"] = _find(out, row + rf"full gate.*?\s{NUM} ms")
        figures[f"{corpus} full / baseline"] = _find(out, row + rf"full gate.*?\s{NUM}x baseline")
        figures[f"{corpus} incremental ms"] = _find(out, row + rf"incremental.*?\s{NUM} ms")
        figures[f"{corpus} max RSS MiB"] = _find(out, row + rf"peak memory.*?\s{NUM} MiB")
        figures[f"{corpus} Python peak MiB"] = _find(out, row + rf"peak Python.*?\s{NUM} MiB")
    return figures


def _ignore(out: str) -> dict[str, float]:
    return {
        "adversarial, all cases ms": _find(out, rf"all cases: {NUM} ms"),
        "adversarial, slowest match ms": _find(out, rf"slowest match: {NUM} ms"),
        "normal case matcher ms": _find(out, rf"matcher {NUM} ms"),
    }


def _ingress(out: str) -> dict[str, float]:
    return {
        "real path deliveries/s (up)": _find(out, rf"^\(b\) real path\s+{NUM}/s"),
        "real path p50 ms": _find(out, rf"^\(b\) real path\s+\S+\s+{NUM} ms"),
        "real path (b)/(a) (up)": _find(out, rf"\(b\)/\(a\) = {NUM}"),
        "limits (a2)/(a) (up)": _find(out, rf"\(a2\)/\(a\) = {NUM}"),
    }


def _check(out: str) -> dict[str, float]:
    return {
        "cold p50 ms": _find(out, rf"^cold\s+\d+\s+{NUM}ms"),
        "warm p50 ms": _find(out, rf"^warm\s+\d+\s+{NUM}ms"),
        "gate alone ms": _find(out, rf"the gate \({NUM} ms"),
    }


def _unused(out: str) -> dict[str, float]:
    """Matching and finding the unused lines, together: before issue 20 item 3 the bench
    printed the unused-pattern pass beside matching alone, since then the survey doing both."""
    figures: dict[str, float] = {}
    for label in ("in use", "unused"):
        survey = rf"every line {label}: survey {NUM}x matching alone \({NUM} ms vs {NUM} ms"
        if re.search(survey, out, re.MULTILINE):
            total, alone = _find(out, survey, 2), _find(out, survey, 3)
        else:
            line = rf"every line {label}: {NUM}x the matcher's own pass \({NUM} ms vs {NUM} ms"
            alone = _find(out, line, 3)
            total = _find(out, line, 2) + alone
        figures[f"lines {label}: matching + unused ms"] = total
        figures[f"lines {label}: / matching alone"] = total / alone
    return figures


def _workers(out: str) -> dict[str, float]:
    return {
        "1 worker checks/s (up)": _find(out, rf"^1 worker\s+{NUM} checks/s"),
        "2 workers checks/s (up)": _find(out, rf"^2 workers\s+{NUM} checks/s"),
        "1 worker CPU ms/check": _find(out, rf"^1 worker .*\s{NUM} ms of worker CPU"),
        "2 workers CPU ms/check": _find(out, rf"^2 workers .*\s{NUM} ms of worker CPU"),
    }


@dataclass(frozen=True)
class Bench:
    name: str
    argv: list[str]  # after the interpreter, run from the tree's root
    figures: Callable[[str], dict[str, float]]


BENCHES = (
    Bench("unused", ["bench/bench_unused_ignore.py"], _unused),
    Bench(
        "gate",
        _patched("bench_gate", "b.yamllint_seconds = lambda tree: None", ["--runs", "3"]),
        _gate,
    ),
    Bench(
        "ignore",
        _patched("bench_ignore", "b.git_seconds = lambda repo, case: (b.GIT_TIMEOUT, None)", []),
        _ignore,
    ),
    Bench(
        "ingress",
        ["bench/bench_ingress.py", "--seconds", "3", "--ab-rounds", "2", "--ab-seconds", "1"],
        _ingress,
    ),
    Bench("check", ["bench/bench_check.py", "--cold", "2", "--warm", "5"], _check),
    Bench("workers", ["bench/bench_workers.py", "--checks", "8"], _workers),
)


def run(tree: Path, bench: Bench, log: Path | None, tag: str) -> dict[str, float] | None:
    try:
        proc = subprocess.run(
            [str(tree / ".venv/bin/python"), *bench.argv],
            cwd=tree,
            capture_output=True,
            text=True,
            check=False,
            timeout=900,  # a hung bench loses its pair, not the whole comparison
        )
    except subprocess.TimeoutExpired:
        print(f"{tag}: no answer in 900 s", file=sys.stderr)
        return None
    if log is not None:
        (log / f"{tag}.out").write_text(proc.stdout + proc.stderr)
    try:
        if proc.returncode != 0:
            raise ValueError(f"exit {proc.returncode}")
        return bench.figures(proc.stdout)
    except ValueError as err:
        print(f"{tag}: {err}\n{(proc.stdout + proc.stderr)[-1500:]}", file=sys.stderr)
        return None


def table(results: dict[str, list[tuple[dict[str, float], dict[str, float]]]]) -> list[str]:
    lines = [
        "| benchmark | old median | new median | ratio | range | |",
        "|---|---|---|---|---|---|",
    ]
    for name, pairs in results.items():
        if not pairs:
            lines.append(f"| {name} | (no complete pair) | | | | |")
            continue
        for figure in pairs[0][0]:
            old = statistics.median(o[figure] for o, _ in pairs)
            new = statistics.median(n[figure] for _, n in pairs)
            ratios = [n[figure] / o[figure] for o, n in pairs if o[figure]]
            worse = [r < 1 / 1.10 if "(up)" in figure else r > 1.10 for r in ratios]
            flag = "WORSE" if ratios and all(worse) else ""
            ratio = f"{new / old:.3f}" if old else "-"
            spread = f"{min(ratios):.3f}–{max(ratios):.3f}" if ratios else "-"
            lines.append(f"| {name}: {figure} | {old:g} | {new:g} | {ratio} | {spread} | {flag} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="worktree of the older revision, installed")
    parser.add_argument("--new", type=Path, default=ROOT, help="the newer tree (default: this)")
    parser.add_argument("--pairs", type=int, default=3, help="old/new pairs per bench")
    parser.add_argument("--only", default="", help="comma-separated bench names")
    parser.add_argument("--log", type=Path, help="folder for every run's output")
    args = parser.parse_args(argv)
    chosen = [b for b in BENCHES if not args.only or b.name in args.only.split(",")]
    if args.log is not None:
        args.log.mkdir(parents=True, exist_ok=True)
    results: dict[str, list[tuple[dict[str, float], dict[str, float]]]] = {
        b.name: [] for b in chosen
    }
    for pair in range(args.pairs):
        for bench in chosen:
            print(f"pair {pair + 1}/{args.pairs}: {bench.name}", file=sys.stderr, flush=True)
            old = run(args.old.resolve(), bench, args.log, f"{bench.name}-{pair}-old")
            new = run(args.new.resolve(), bench, args.log, f"{bench.name}-{pair}-new")
            if old is not None and new is not None:
                results[bench.name].append((old, new))
    print("\n".join(table(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
