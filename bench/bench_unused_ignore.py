"""``make bench``: what finding ``unused-ignore-pattern`` lines costs, as ratios.

The baseline is the matcher's own pass over the same entries (what the structural gate does
for every entry anyway), measured in this run. Two ignore files over a real corpus's paths:
every line in use, and every line unused (the worst case: each unused line is tried against
every entry). Then the same with the entries doubled, to show the cost grows linearly.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import bench_gate  # the script's own folder is first on sys.path

from bot.cli.demo import read_tree
from bot.gate.unused_ignore import unused_rules
from bot.ignore.rules import parse_ignore_file, read_rules

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
CORPUS = "xunholy-k8s-gitops"
LINES = 50


def median_seconds(fn: Callable[[], object], runs: int = 9) -> float:
    return bench_gate.median_seconds(fn, runs)


def measure(rels: list[str], text: str) -> tuple[float, float]:
    matcher = parse_ignore_file(text).matcher
    rules = read_rules(text)

    def baseline() -> None:
        fresh = parse_ignore_file(text).matcher  # no directory memo carried over between runs
        for rel in rels:
            fresh.rule_for(rel)

    base = median_seconds(baseline)
    unused = median_seconds(
        lambda: unused_rules(rules, parse_ignore_file(text).matcher.survey(rels))
    )
    assert matcher is not None
    return base, unused


def main() -> None:
    tree = SHARED / "corpora" / CORPUS / "tree"
    rels = sorted(read_tree(tree))
    dirs = sorted({rel.rpartition("/")[0] for rel in rels if "/" in rel})
    used = "\n".join(f"/{d}/" for d in dirs[:LINES]) + "\n"
    unused = "\n".join(f"/no-such-dir-{n}/*.txt" for n in range(LINES)) + "\n"
    doubled = rels + [f"copy/{rel}" for rel in rels]
    print(f"unused-ignore-pattern over {CORPUS}: {len(rels)} entries, {LINES} ignore lines")
    for label, text in (("every line in use", used), ("every line unused", unused)):
        base, cost = measure(rels, text)
        base2, cost2 = measure(doubled, text)
        print(
            f"  {label}: {cost / base:.2f}x the matcher's own pass "
            f"({cost * 1000:.1f} ms vs {base * 1000:.1f} ms); "
            f"entries doubled: {cost2 / cost:.2f}x the time ({cost2 / base2:.2f}x its pass)"
        )


if __name__ == "__main__":
    main()
