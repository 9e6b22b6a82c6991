"""Check latency end to end: a signed ``pull_request`` webhook → ``ichor-bot serve`` → Redis →
``ichor-bot worker`` → a completed check run on the fake GitHub, for a pull request touching
one file in a 20,000-file repository built from the corpora.

Measured with the worker's mirror cold (a new worker and data directory per run: partial
clone, blob prefetch, every file parsed) and warm (one long-lived worker: incremental fetch,
facts cached); printed as p50/p95 and as ratios to the gate alone on the touched target,
measured in the same run. Also the forge API calls each check made.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.cli.demo import read_tree  # noqa: E402
from bot.gate.policy import GatePolicy, TargetPolicy  # noqa: E402
from bot.gate.run import run_gate  # noqa: E402
from bot.git.repository import GitRepository  # noqa: E402
from tests.e2e.harness import BIN, Bot, pull_request_payload  # noqa: E402
from tests.fakeforge import FakeGitHub  # noqa: E402
from tests.support.gitrepo import WorkRepo  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpora"
CORPORA = (
    "sulibot-home-ops",
    "xunholy-k8s-gitops",
    "bjw-s-labs-home-ops",
    "flux2-kustomize-helm-example",
)
TOUCHED = "clusters/copy-0/sulibot-home-ops"
FILES = 20_000


def build_work_repo(path: Path, limit: int = FILES) -> tuple[WorkRepo, list[TargetPolicy], str]:
    """Whole copies of the corpora, one target each, until ``limit`` files; a limit below one
    copy stops at the corpus that reaches it (a small repository for smoke tests)."""
    trees = {name: read_tree(SHARED / name / "tree") for name in CORPORA}
    files: dict[str, bytes] = {}
    targets: list[TargetPolicy] = []
    copy = 0
    while len(files) < limit:
        for name, tree in trees.items():
            if copy == 0 and len(files) >= limit:
                break
            root = f"clusters/copy-{copy}/{name}"
            targets.append(TargetPolicy(f"c{copy}-{name[:20]}".lower(), root))
            files.update({f"{root}/{p}": data for p, data in tree.items()})
        copy += 1
    config = "version: 1\ntargets:\n" + "".join(
        f"  - {{name: {t.name}, path: {t.path}}}\n" for t in targets
    )
    work = WorkRepo(path)
    for rel, data in files.items():
        dest = path / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    (path / ".ichor.yaml").write_text(config)
    base = work.commit({}, "corpora")
    return work, targets, base


def touched_file(work: WorkRepo) -> str:
    for p in sorted((work.path / TOUCHED).rglob("*.yaml")):
        if "configmap" in p.name.lower() or "kustomization" not in p.name:
            return p.relative_to(work.path).as_posix()
    raise RuntimeError("no YAML file in the touched target")


def gate_seconds(repo: Path, rev: str, target: TargetPolicy) -> float:
    snapshot = GitRepository(repo).snapshot(rev, [target.path, ".ichor.yaml"])
    started = time.perf_counter()
    run_gate(snapshot, GatePolicy((target,)))
    elapsed = time.perf_counter() - started
    snapshot.close()
    return elapsed


class Worker:
    """A long-lived ``ichor-bot worker`` (not burst): jobs run as they arrive."""

    def __init__(self, bot: Bot, fake: FakeGitHub, data_dir: Path) -> None:
        env = bot._env({**fake.env(), "ICHOR_DATA_DIR": str(data_dir)})
        self.log = (data_dir.parent / f"{data_dir.name}.log").open("wb")
        self.proc = subprocess.Popen(
            [str(BIN / "ichor-bot"), "worker"], env=env, stdout=self.log, stderr=subprocess.STDOUT
        )
        time.sleep(1.0)  # imports and registration, before the clock starts

    def stop(self) -> None:
        if self.proc.poll() is not None:
            print(Path(self.log.name).read_text()[-3000:], file=sys.stderr)
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def one_check(
    bot: Bot, fake: FakeGitHub, work: WorkRepo, full_name: str, number: int, base: str, path: str
) -> tuple[float, int]:
    """Post a pull request whose head changes one file; seconds until its check completed, and
    the API calls it made."""
    text = (work.path / path).read_text()
    head = work.commit({path: text + f"# change {number}\n"}, f"change {number}")
    work.git("checkout", "-q", "-B", "main", base)
    work.set_ref(f"refs/pull/{number}/head", head)
    work.publish(fake.git_root / f"{full_name}.git")  # type: ignore[operator]
    fake.add_pull(full_name, number, head_sha=head, base_sha=base)
    calls_before = len(fake.calls)
    payload = pull_request_payload(
        full_name=full_name,
        clone_url=fake.clone_url(full_name),
        number=number,
        head_sha=head,
        base_sha=base,
    )
    started = time.perf_counter()
    assert bot.post("pull_request", payload) == 202
    deadline = started + 300
    while time.perf_counter() < deadline:
        runs = [r for r in fake.check_runs(full_name) if r["head_sha"] == head]
        if runs and runs[0]["status"] == "completed":
            elapsed = time.perf_counter() - started
            return elapsed, len(fake.calls) - calls_before
        time.sleep(0.005)
    raise RuntimeError(f"the check did not complete; calls: {fake.calls_summary()[-5:]}")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description="Ichor Bot check latency benchmark")
    parser.add_argument("--cold", type=int, default=5, help="cold runs (default 5)")
    parser.add_argument("--warm", type=int, default=20, help="warm runs (default 20)")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="ichor-bench-check-"))
    try:
        work, targets, base = build_work_repo(workdir / "work")
        count = int(work.git("ls-files", "-z").count("\0"))
        touched = next(t for t in targets if t.path == TOUCHED)
        path = touched_file(work)
        gate_cold = statistics.median(gate_seconds(work.path, base, touched) for _ in range(3))
        with FakeGitHub(workdir / "forge-git") as fake:
            # A name of its own: the shared Redis keeps pull request state between runs.
            full_name = f"bench-{uuid.uuid4().hex[:8]}/gitops"
            fake.add_repo(full_name, installation_id=42)
            fake.make_bare_repo(full_name)
            bot = Bot(workdir)
            bot.repositories.add(full_name)
            bot.start()
            try:
                cold: list[float] = []
                number = 1
                for n in range(args.cold):
                    worker = Worker(bot, fake, workdir / f"cold-{n}")
                    try:
                        cold.append(one_check(bot, fake, work, full_name, number, base, path)[0])
                    finally:
                        worker.stop()
                    number += 1
                warm: list[float] = []
                calls: list[int] = []
                worker = Worker(bot, fake, workdir / "warm")
                try:
                    one_check(bot, fake, work, full_name, number, base, path)  # fills the mirror
                    number += 1
                    for _ in range(args.warm):
                        seconds, made = one_check(bot, fake, work, full_name, number, base, path)
                        warm.append(seconds)
                        calls.append(made)
                        number += 1
                finally:
                    worker.stop()
            finally:
                bot.stop()
            first_calls = fake.calls_summary()[:3]
        touched_files = sum(1 for p in (work.path / TOUCHED).rglob("*") if p.is_file())
        print(f"repository: {count:,} files, {len(targets)} targets; the change touches one file")
        print(f"of {TOUCHED} ({touched_files:,} files)")
        print()
        header = f"{'mirror':<6}  {'runs':>4}  {'p50':>8}  {'p95':>8}"
        print(f"{header}  vs. the gate alone on the target")
        for name, values in (("cold", cold), ("warm", warm)):
            p50, p95 = pct(values, 0.5), pct(values, 0.95)
            print(
                f"{name:<6}  {len(values):>4}  {p50 * 1000:>6.0f}ms  {p95 * 1000:>6.0f}ms  "
                f"p50 = {p50 / gate_cold:.2f}x the gate ({gate_cold * 1000:.0f} ms, cold parse)"
            )
        print()
        print(f"API calls of the first check: {first_calls}")
        print(f"API calls per warm check (token cached): {sorted(set(calls))}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
