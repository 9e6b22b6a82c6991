"""``make bench``: the ``.gittargetignore`` matcher's worst case and normal case, against git.

Every figure is measured in this run, on this machine; nothing is compared with a stored
number, and nothing here is a test.

- **adversarial**: generated (pattern, path) pairs built to make a backtracking matcher
  explode (runs of ``*`` between repeated bytes, ``**`` between repeated directories, the
  prefix quirk, classes, near misses), paths up to 4,096 bytes. For each case the matcher's
  time is the best of a few calls, and git's is ``git check-ignore --no-index --stdin`` on
  the same pattern and path, per match: one process reads the path once, another reads it
  ``n + 1`` times (``n`` up to ``REPEAT``, fewer when git is slow on the case), and the
  difference over ``n`` leaves git's start-up out. git
  (2.39) backtracks too, so a git run is stopped after ``GIT_TIMEOUT`` seconds and counted
  as at least that. The slowest case is reported with its ratio to git on that case; the
  answers are compared wherever git finished.
- **normal**: every path of a real corpus against an ordinary ignore file, the matcher vs.
  git checking the same paths in one process.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bot.git.repository import git_environment
from bot.ignore.rules import IgnoreMatcher, read_rules
from bot.paths import decode_path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
CORPUS = "sulibot-home-ops"
MAX_NAME = 4096
REPEAT = 200
GIT_TIMEOUT = 1.0
GIT_CHECK_IGNORE: tuple[str, ...] = ("git", "-c", "core.excludesFile=/dev/null")
GIT_CHECK_IGNORE += ("check-ignore", "--no-index", "--stdin", "-z")
NORMAL_IGNORE = b"""\
# an ordinary .gittargetignore
*.md
/docs/
**/README*
*.bak
**/tmp/**
!/docs/keep.md
/scripts/*.sh
.DS_Store
[Tt]humbs.db
**/*.tmp
"""


@dataclass(frozen=True)
class Case:
    pattern: bytes
    path: bytes


def _fit(path: bytes) -> bytes:
    """At most ``MAX_NAME`` bytes, never ending in ``/`` or holding an empty segment."""
    path = path[:MAX_NAME].strip(b"/")
    while b"//" in path:
        path = path.replace(b"//", b"/")
    return path or b"a"


def adversarial_cases(rng: random.Random, count: int) -> list[Case]:
    lengths = (60, 250, 1000, 4096)
    cases: list[Case] = []
    # The shape: k stars between repeated bytes, a final byte that is never there.
    for stars in (2, 4, 8, 12, 16, 24, 32):
        for length in lengths:
            cases.append(Case(b"a*" * stars + b"b", b"a" * length))
            cases.append(Case(b"*a" * stars + b"*b", b"a" * (length - 1) + b"c"))
            cases.append(Case(b"[a-z]*" * stars + b"[0-9]", b"x" * length))
            cases.append(Case(b"?*" * stars + b"a?b", b"a" * length))
    # ``**`` between repeated directories, a last segment that never matches.
    for stars in (2, 4, 8, 16):
        for length in lengths:
            cases.append(Case(b"**/a/" * stars + b"b", _fit(b"a/" * (length // 2))))
            cases.append(Case(b"/a**/" * stars + b"b", _fit(b"a/" * (length // 2))))
            cases.append(Case(b"**/*a*a*a*/" * stars + b"b", _fit(b"aaa/" * (length // 4))))
    # Random mixes of the dangerous tokens over a two-byte alphabet.
    tokens = (b"a", b"a", b"b", b"*", b"*", b"**", b"?", b"[ab]", b"[!b]", b"/", b"**/", b"\\a")
    while len(cases) < count:
        pattern = b"".join(rng.choice(tokens) for _ in range(rng.randint(3, 40)))
        length = rng.choice(lengths) if rng.random() < 0.5 else rng.randint(1, MAX_NAME)
        alphabet = rng.choice((b"a", b"ab", b"a/", b"aab/"))
        path = _fit(bytes(rng.choice(alphabet) for _ in range(length)))
        cases.append(Case(pattern.rstrip(b"\\") or b"a", path))
    return cases


def matcher_seconds(case: Case) -> tuple[float, bool]:
    matcher = IgnoreMatcher(read_rules(decode_path(case.pattern)))
    path = decode_path(case.path)
    best = float("inf")
    ignored = False
    for _ in range(3):
        fresh = IgnoreMatcher(matcher.rules)  # no directory answers cached from the last call
        start = time.perf_counter()
        ignored = fresh.is_ignored(path)
        best = min(best, time.perf_counter() - start)
    return best, ignored


def _git_check_ignore(
    repo: Path, paths: list[bytes], timeout: float | None = None
) -> tuple[float, set[bytes] | None]:
    """git's time and the paths it ignores; ``(timeout, None)`` when it did not finish."""
    start = time.perf_counter()
    try:
        done = subprocess.run(
            GIT_CHECK_IGNORE,
            cwd=repo,
            input=b"".join(path + b"\0" for path in paths),
            capture_output=True,
            env=git_environment(),
            check=False,  # 1: nothing ignored
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return timeout or 0.0, None
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise RuntimeError(done.stderr.decode(errors="replace"))
    return elapsed, {path for path in done.stdout.split(b"\0") if path}


def git_seconds(repo: Path, case: Case) -> tuple[float, bool | None]:
    """git's time for one match of the case, and its answer (``None``: it did not finish)."""
    (repo / ".gitignore").write_bytes(case.pattern + b"\n")
    once, ignored = _git_check_ignore(repo, [case.path], GIT_TIMEOUT)
    if ignored is None:
        return GIT_TIMEOUT, None
    # Enough repeats for git's matching to stand out of its start-up (a few ms).
    repeat = max(3, min(REPEAT, int(0.2 / max(once, 1e-3))))
    many, finished = _git_check_ignore(repo, [case.path] * (repeat + 1), GIT_TIMEOUT * repeat)
    if finished is None:
        return GIT_TIMEOUT, None
    return max(many - once, 0.0) / repeat, case.path in ignored


def _show(data: bytes, limit: int = 40) -> str:
    text = repr(data[:limit])[2:-1]
    return text + (f"... ({len(data)} bytes)" if len(data) > limit else "")


def adversarial(repo: Path, count: int, seed: int) -> list[str]:
    cases = adversarial_cases(random.Random(seed), count)  # noqa: S311 - test data
    worst: tuple[float, float, Case] | None = None
    worst_number = -1
    finished: tuple[float, float, Case] | None = None  # the slowest where git finished
    ratios: list[float] = []
    disagree = timeouts = 0
    total = 0.0
    timed_out: set[int] = set()
    for number, case in enumerate(cases):
        ours, ours_ignored = matcher_seconds(case)
        git, git_ignored = git_seconds(repo, case)
        if git_ignored is None:
            timeouts += 1
            timed_out.add(number)
        else:
            disagree += ours_ignored != git_ignored
        total += ours
        if git > 0:  # git's difference of two runs can be 0 or less on the quickest cases
            ratios.append(ours / git)
        if worst is None or ours > worst[0]:
            worst = (ours, git, case)
            worst_number = number
        if git_ignored is not None and (finished is None or ours > finished[0]):
            finished = (ours, git, case)
    assert worst is not None
    ours, git, case = worst
    ratios.sort()
    bound = "at most " if worst_number in timed_out else ""
    slowest = f"slowest match: {ours * 1e3:.3f} ms, git {git * 1e3:.3f} ms on the same case"
    if worst_number in timed_out:
        slowest = f"slowest match: {ours * 1e3:.3f} ms, git did not finish in {GIT_TIMEOUT} s"
    return [
        f"cases: {len(cases)}, longest path {max(len(c.path) for c in cases)} bytes",
        f"{slowest} ({bound}{ours / git:.2g}x git)" if git > 0 else slowest,
        f"  pattern {_show(case.pattern)}  path {_show(case.path)}",
        f"git did not finish in {GIT_TIMEOUT} s on {timeouts} cases (counted as {GIT_TIMEOUT} s)",
        _slowest_finished(finished),
        f"all cases: {total * 1e3:.1f} ms; ratio to git per case: median "
        f"{ratios[len(ratios) // 2]:.2f}x, 99th percentile {ratios[len(ratios) * 99 // 100]:.2f}x",
        f"answers that differ from git: {disagree}",
    ]


def _slowest_finished(finished: tuple[float, float, Case] | None) -> str:
    if finished is None:
        return "git finished no case"
    ours, git, case = finished
    ratio = f" ({ours / git:.2g}x git)" if git > 0 else ""
    return (
        f"slowest where git finished: {ours * 1e3:.3f} ms, git {git * 1e3:.3f} ms{ratio}; "
        f"pattern {_show(case.pattern)}, path of {len(case.path)} bytes"
    )


def corpus_paths() -> list[bytes]:
    tree = SHARED / "corpora" / CORPUS / "tree"
    paths = []
    for root, _, files in os.walk(tree):
        for name in files:
            paths.append(os.path.relpath(os.path.join(root, name), tree).encode())
    return sorted(paths)


def normal(repo: Path, runs: int) -> list[str]:
    paths = corpus_paths()
    (repo / ".gitignore").write_bytes(NORMAL_IGNORE)
    rules = read_rules(NORMAL_IGNORE.decode())
    decoded = [decode_path(path) for path in paths]
    best = float("inf")
    ours: set[str] = set()
    for _ in range(runs):
        matcher = IgnoreMatcher(rules)
        start = time.perf_counter()
        ours = {path for path in decoded if matcher.is_ignored(path)}
        best = min(best, time.perf_counter() - start)
    git = min(_git_check_ignore(repo, paths)[0] for _ in range(runs))
    _, git_ignored = _git_check_ignore(repo, paths)
    same = ours == {decode_path(path) for path in git_ignored or ()}
    return [
        f"{CORPUS}: {len(paths)} paths, {len(rules)} rules: matcher {best * 1e3:.1f} ms "
        f"({best / len(paths) * 1e6:.2f} us a path), git check-ignore {git * 1e3:.1f} ms "
        f"(one process, start-up included): {best / git:.2f}x git; same answers: {same}",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description="Ichor Bot .gittargetignore benchmarks")
    parser.add_argument("--cases", type=int, default=1200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ichor-bench-ignore-") as tmp:
        repo = Path(tmp)
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env=git_environment())
        print("adversarial .gittargetignore patterns")
        for line in adversarial(repo, args.cases, args.seed):
            print("  " + line)
        print("normal case")
        for line in normal(repo, args.runs):
            print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
