"""``make bench``: what ``.gittargetignore`` lines cost the gate, as ratios to baselines.

Every baseline is measured in this run, on this machine; nothing here is a test.

- **unused lines over a corpus**: the matcher's survey (every entry decided, and the lines
  in use found, in one pass) against matching alone (``rule_for`` of every entry), over a
  real corpus's paths with two ignore files: every line in use, every line unused. Then the
  same with the entries doubled, to show the cost grows linearly.
- **a long ignore file** (issue 20, item 3): a synthetic tree of 4,000 files in a temporary
  git repository and a 10,000-line ignore file whose lines match nothing. The gate's
  structural pass over it (reading the file, the denied-pattern checks, every entry
  classified, one ``unused-ignore-pattern`` warning per line) against
  ``git ls-files -o -i --exclude-from=FILE`` on the same tree (start-up and its walk of the
  tree included). Lines of the usual shapes, which the matcher looks up by a literal; then,
  fewer of them, lines with no literal byte (``*[nN][oO]...*``), which every name has to try.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import bench_gate  # the script's own folder is first on sys.path

from bot.cli.demo import read_tree
from bot.gate.codes import IssueCode
from bot.gate.policy import TargetPolicy
from bot.gate.report import Role
from bot.gate.structural import classify_target
from bot.gate.unused_ignore import unused_rules
from bot.git.directory import read_directory
from bot.git.repository import git_environment
from bot.git.snapshot import Snapshot
from bot.ignore.rules import IGNORE_FILE, parse_ignore_file, read_rules

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
CORPUS = "xunholy-k8s-gitops"
LINES = 50
TEAMS, SERVICES, FILES = 20, 10, 20  # 4,000 files
# The usual shapes, none matching the tree: anchored directories (one under a directory
# that exists), extensions, names, directory names, a directory at any depth, prefixes.
SHAPES = (
    "/no-such-dir-{}/",
    "/apps/team-{}-old/*.yaml",
    "*.nosuch{}",
    "nosuch-{}.bak",
    "build-{}/",
    "**/tmp-{}/*.log",
    "scratch-{}*",
    "/apps/*/svc-{}-old/",
)


def unfiled(number: int) -> str:
    """A line with no literal byte to look it up by: ``*[nN][oO]...[1Q][2Q]*``."""
    letters = "".join(f"[{c}{c.upper()}]" for c in "nosuch")
    return f"*{letters}{''.join(f'[{digit}Q]' for digit in str(number))}*"


def median_seconds(fn: Callable[[], object], runs: int = 9) -> float:
    return bench_gate.median_seconds(fn, runs)


def measure(rels: list[str], text: str) -> tuple[float, float]:
    rules = read_rules(text)

    def baseline() -> None:
        fresh = parse_ignore_file(text).matcher  # no directory memo carried over between runs
        for rel in rels:
            fresh.rule_for(rel)

    base = median_seconds(baseline)
    unused = median_seconds(
        lambda: unused_rules(rules, parse_ignore_file(text).matcher.survey(rels))
    )
    return base, unused


def corpus_lines() -> list[str]:
    tree = SHARED / "corpora" / CORPUS / "tree"
    rels = sorted(read_tree(tree))
    dirs = sorted({rel.rpartition("/")[0] for rel in rels if "/" in rel})
    used = "\n".join(f"/{d}/" for d in dirs[:LINES]) + "\n"
    unused = "\n".join(f"/no-such-dir-{n}/*.txt" for n in range(LINES)) + "\n"
    doubled = rels + [f"copy/{rel}" for rel in rels]
    out = [f"unused-ignore-pattern over {CORPUS}: {len(rels)} entries, {LINES} ignore lines"]
    for label, text in (("every line in use", used), ("every line unused", unused)):
        base, cost = measure(rels, text)
        base2, cost2 = measure(doubled, text)
        out.append(
            f"  {label}: survey {cost / base:.2f}x matching alone "
            f"({cost * 1000:.1f} ms vs {base * 1000:.1f} ms); "
            f"entries doubled: {cost2 / cost:.2f}x the time ({cost2 / base2:.2f}x matching alone)"
        )
    return out


def synthetic_tree(root: Path) -> int:
    """4,000 files of a GitOps-like layout, untracked in a fresh git repository."""
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=git_environment())
    count = 0
    for team in range(TEAMS):
        for service in range(SERVICES):
            folder = root / "apps" / f"team-{team}" / f"svc-{service}"
            folder.mkdir(parents=True)
            names = ["kustomization.yaml", "README.md"]
            names += [f"resource-{n}.yaml" for n in range(FILES - len(names))]
            for name in names:
                (folder / name).write_bytes(b"kind: ConfigMap\n")
                count += 1
    return count


def git_ignored(root: Path, ignore_file: Path) -> tuple[float, int]:
    """``git ls-files -o -i --exclude-from``: its time (the median of three) and its count."""
    command = ["git", "-c", "core.excludesFile=/dev/null", "ls-files", "-o", "-i", "-z"]
    command.append(f"--exclude-from={ignore_file}")

    def run() -> bytes:
        done = subprocess.run(
            command, cwd=root, capture_output=True, check=True, env=git_environment()
        )
        return done.stdout

    return median_seconds(run, 3), len([path for path in run().split(b"\0") if path])


def gate_ignored(snapshot: Snapshot) -> tuple[float, int, int]:
    """The structural pass: its time (the median of three), entries ignored, warnings."""
    target = TargetPolicy("tree", "")
    seconds = median_seconds(lambda: classify_target(snapshot, target), 3)
    report = classify_target(snapshot, target).report
    warnings = sum(issue.kind is IssueCode.UNUSED_IGNORE_PATTERN for issue in report.issues)
    return seconds, report.counts[Role.IGNORED], warnings


def long_file_lines(lines: int, count: int) -> list[str]:
    out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ichor-bench-unused-") as tmp:
        root = Path(tmp)
        files = synthetic_tree(root)
        ignore_file = root / IGNORE_FILE
        cases = (
            (
                "lines of the usual shapes",
                [SHAPES[n % len(SHAPES)].format(n) for n in range(lines)],
            ),
            ("lines with no literal byte", [unfiled(n) for n in range(count)]),
        )
        for label, patterns in cases:
            ignore_file.write_text("\n".join(patterns) + "\n")
            snapshot = read_directory(root)
            gate, ignored, warnings = gate_ignored(snapshot)
            git, git_count = git_ignored(root, ignore_file)
            out.append(
                f"  {len(patterns):,} {label} x {files:,} files: gate {gate * 1000:.0f} ms, "
                f"git ls-files -o -i --exclude-from {git * 1000:.0f} ms: {gate / git:.2f}x git "
                f"(ignored: gate {ignored}, git {git_count}; {warnings:,} unused-pattern warnings)"
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="Ichor Bot unused-ignore-pattern benchmarks")
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--unfiled", type=int, default=1_000)
    args = parser.parse_args()
    for line in corpus_lines():
        print(line)
    print("a long .gittargetignore whose lines match nothing, the gate's structural pass")
    for line in long_file_lines(args.lines, args.unfiled):
        print(line)


if __name__ == "__main__":
    main()
