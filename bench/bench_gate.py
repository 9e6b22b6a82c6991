"""``make bench``: the gate's speed and memory on real corpora, as ratios to baselines.

Every figure is measured in this run, on this machine, against a baseline measured in the
same run: nothing is compared with a stored number, and nothing here is a test.

- full gate vs. baseline: ``git cat-file --batch`` of the same YAML blobs plus libyaml
  (``CSafeLoader``) on each — the least any gate reading those files must do;
- yamllint on the same tree, for reference (it does less: syntax and style only);
- incremental: a second check after one file changed, with the parse cache warm;
- peak memory of a full check (max RSS of a child process).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import yaml

from bot.cli.demo import build_repository, read_tree
from bot.gate.content.cache import MemoryFactsCache
from bot.gate.policy import GatePolicy, TargetPolicy
from bot.gate.run import RegistryCache, run_gate
from bot.git.repository import GitRepository, git_environment

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
CORPORA = ("sulibot-home-ops", "xunholy-k8s-gitops")
POLICY = GatePolicy((TargetPolicy("tree", ""),))


def median_seconds(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def yaml_blobs(repo: Path) -> list[str]:
    listing = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "-z", "--full-tree", "HEAD"],
        capture_output=True,
        check=True,
        env=git_environment(),
    ).stdout
    oids = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, _, oid = meta.split(b" ")
        if mode != b"120000" and path.endswith((b".yaml", b".yml")):
            oids.append(oid.decode())
    return oids


def baseline(repo: Path, oids: list[str]) -> None:
    """cat-file --batch of every YAML blob, then libyaml on each."""
    out = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        input="".join(f"{oid}\n" for oid in oids).encode(),
        capture_output=True,
        check=True,
        env=git_environment(),
    ).stdout
    pos = 0
    while pos < len(out):
        end = out.index(b"\n", pos)
        size = int(out[pos:end].split()[2])
        data = out[end + 1 : end + 1 + size]
        pos = end + 2 + size
        with contextlib.suppress(yaml.YAMLError):
            list(yaml.load_all(data, Loader=yaml.CSafeLoader))


# Type registries carried between checks, as a worker's context carries them.
REGISTRIES = RegistryCache()


def full_check(repo: Path, cache: MemoryFactsCache | None = None, rev: str = "HEAD") -> None:
    with GitRepository(repo).snapshot(rev) as snap:
        run_gate(snap, POLICY, cache=cache, registries=REGISTRIES)


def _peak_rss_mib(code: str, *args: str) -> float:
    """Max RSS of a fresh interpreter running ``code``, as that process reports it."""
    report = "import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\n{report}", *args],
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    return int(out.split()[-1]) / 1024


def child_peak_rss_mib(repo: Path) -> float:
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, 'bench')\n"
        "from bench_gate import full_check; full_check(Path(sys.argv[1]))"
    )
    return _peak_rss_mib(code, str(repo))


def python_peak_mib(repo: Path) -> float:
    """Peak of Python allocations during one full check (tracemalloc), in this process."""
    full_check(repo)  # imports and one-time tables are not the check's own cost
    tracemalloc.start()
    full_check(repo)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / (1 << 20)


def baseline_rss_mib() -> float:
    return _peak_rss_mib("import bot.gate.run")


def yamllint_seconds(tree: Path) -> float | None:
    exe = shutil.which("yamllint") or str(Path(sys.executable).parent / "yamllint")
    if not Path(exe).exists():
        return None
    start = time.perf_counter()
    subprocess.run(
        [exe, "-f", "parsable", "-d", "relaxed", "."],
        cwd=tree,
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - start


def commit_packed(repo: Path, files: dict[str, bytes]) -> None:
    """Commit ``files``, then pack: the bot's mirrors are fetched packs, not loose objects."""
    build_repository(repo, files)
    subprocess.run(["git", "-C", str(repo), "gc", "--quiet"], check=True, env=git_environment())


def measure(name: str, workdir: Path, runs: int) -> list[tuple[str, str, str, str]]:
    tree = SHARED / "corpora" / name / "tree"
    repo = workdir / name
    files = read_tree(tree)
    commit_packed(repo, files)
    oids = yaml_blobs(repo)
    rows = []
    base = median_seconds(lambda: baseline(repo, oids), runs)
    # A worker knows the commit id from the webhook: resolving a name is not part of a check.
    head = GitRepository(repo).resolve("HEAD")
    full = median_seconds(lambda: full_check(repo, rev=head), runs)
    rows.append(
        (
            name,
            f"full gate ({len(oids)} YAML files)",
            f"{full * 1000:.0f} ms",
            f"{full / base:.2f}x baseline ({base * 1000:.0f} ms)",
        )
    )
    lint = yamllint_seconds(tree)
    if lint is not None:
        rows.append(
            (
                name,
                "yamllint (reference)",
                f"{lint * 1000:.0f} ms",
                f"gate {lint / full:.1f}x faster",
            )
        )
    warm = MemoryFactsCache()
    full_check(repo, warm)
    changed = sorted(p for p in files if p.endswith(".yaml"))[0]
    commit_packed(repo, {**files, changed: files[changed] + b"\n# changed\n"})
    # Each run starts from the cache as the previous commit left it: one file is new to it.
    head = GitRepository(repo).resolve("HEAD")
    incremental = median_seconds(lambda: full_check(repo, warm.copy(), head), runs)
    rows.append(
        (
            name,
            "incremental (one file changed, warm cache)",
            f"{incremental * 1000:.0f} ms",
            f"{incremental / full:.3f}x full",
        )
    )
    rows.append(
        (
            name,
            "peak memory of a full check (max RSS)",
            f"{child_peak_rss_mib(repo):.1f} MiB",
            f"interpreter + imports alone: {baseline_rss_mib():.1f} MiB",
        )
    )
    rows.append(
        (name, "peak Python allocations during a check", f"{python_peak_mib(repo):.1f} MiB", "")
    )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description="Ichor Bot gate benchmarks")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="ichor-bench-") as tmp:
        for name in CORPORA:
            rows.extend(measure(name, Path(tmp), args.runs))
    header = ("corpus", "measure", "value", "ratio")
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(4)]
    for row in (header, tuple("-" * w for w in widths), *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
