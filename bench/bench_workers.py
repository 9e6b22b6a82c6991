"""Throughput when workers are added: a burst of 50 pull request checks through ``ichor-bot
serve`` → Redis → N ``ichor-bot worker`` processes → completed check runs on the fake GitHub,
for N = 1 and N = 2, printed as checks per second and the ratio 2 workers / 1 worker.

Each worker has a data directory of its own, as on separate hosts, warmed by one check before
the clock starts (a cold mirror is ``bench_check.py``'s subject). The repository is one copy of
four corpora (about 2,900 files, four targets); each pull request changes one file of one
target. On a machine with fewer cores than workers the ratio stays under 2: the workers share
the CPU with the web process, Redis, git and the fake forge.
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_check import CORPORA, SHARED, Worker  # noqa: E402

from bot.cli.demo import read_tree  # noqa: E402
from tests.e2e.harness import Bot, pull_request_payload  # noqa: E402
from tests.fakeforge import FakeGitHub  # noqa: E402
from tests.support.gitrepo import WorkRepo  # noqa: E402


def build_work_repo(path: Path) -> tuple[WorkRepo, str, list[str]]:
    """One copy of the corpora, one target each; a YAML file of each target to change."""
    work = WorkRepo(path)
    config = "version: 1\ntargets:\n"
    touched: list[str] = []
    for name in CORPORA:
        root = f"clusters/{name}"
        config += f"  - {{name: {name[:40]}, path: {root}}}\n"
        for rel, data in read_tree(SHARED / name / "tree").items():
            dest = path / root / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        yamls = sorted(p for p in (path / root).rglob("*.yaml") if p.name != "kustomization.yaml")
        touched.append(yamls[len(yamls) // 2].relative_to(path).as_posix())
    (path / ".ichor.yaml").write_text(config)
    return work, work.commit({}, "corpora"), touched


class Forge:
    """The fake GitHub with one repository, and pull requests prepared before the clock."""

    def __init__(self, fake: FakeGitHub, work: WorkRepo, base: str, touched: list[str]) -> None:
        self.fake = fake
        self.work = work
        self.base = base
        self.touched = itertools.cycle(touched)
        self.full_name = f"bench-{uuid.uuid4().hex[:8]}/gitops"  # the shared Redis keeps state
        self.number = 0
        fake.add_repo(self.full_name, installation_id=42)
        fake.make_bare_repo(self.full_name)

    def prepare(self, count: int) -> list[tuple[int, str]]:
        """``count`` pull requests, each changing one file; published in one push."""
        pulls: list[tuple[int, str]] = []
        for _ in range(count):
            self.number += 1
            path = next(self.touched)
            text = (self.work.path / path).read_text()
            head = self.work.commit({path: text + f"# change {self.number}\n"}, "change")
            self.work.git("checkout", "-q", "-B", "main", self.base)
            self.work.set_ref(f"refs/pull/{self.number}/head", head)
            self.fake.add_pull(self.full_name, self.number, head_sha=head, base_sha=self.base)
            pulls.append((self.number, head))
        self.work.publish(self.fake.git_root / f"{self.full_name}.git")  # type: ignore[operator]
        return pulls

    def post(self, bot: Bot, number: int, head: str) -> None:
        payload = pull_request_payload(
            full_name=self.full_name,
            clone_url=self.fake.clone_url(self.full_name),
            number=number,
            head_sha=head,
            base_sha=self.base,
        )
        assert bot.post("pull_request", payload) == 202

    def wait_completed(self, heads: set[str], timeout: float = 900) -> None:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            done = {
                r["head_sha"]
                for r in self.fake.check_runs(self.full_name)
                if r["status"] == "completed" and r["head_sha"] in heads
            }
            if done == heads:
                return
            time.sleep(0.01)
        raise RuntimeError(f"{len(heads) - len(done)} checks did not complete")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def burst(bot: Bot, forge: Forge, workdir: Path, workers: int, checks: int) -> tuple[float, float]:
    """Checks per second with ``workers`` warm worker processes on a burst of ``checks``, and
    the workers' CPU seconds per check (they and their git processes, once they exit)."""
    data_dirs = [workdir / f"w{workers}-{uuid.uuid4().hex[:6]}" for _ in range(workers)]
    for data_dir in data_dirs:  # one warm-up check per worker: its mirror and parse cache
        ((number, head),) = forge.prepare(1)
        forge.post(bot, number, head)
        run = bot.run_worker(forge.fake.env(), data_dir)
        assert run.code == 0, run.log[-2000:]
        forge.wait_completed({head})
    pulls = forge.prepare(checks)
    cpu_before = children_cpu()
    running = [Worker(bot, forge.fake, data_dir) for data_dir in data_dirs]
    try:
        started = time.perf_counter()
        for number, head in pulls:
            forge.post(bot, number, head)
        forge.wait_completed({head for _, head in pulls})
        elapsed = time.perf_counter() - started
    finally:
        for worker in running:
            worker.stop()
    return checks / elapsed, (children_cpu() - cpu_before) / checks


def main() -> int:
    parser = argparse.ArgumentParser(description="Ichor Bot throughput with 1 and 2 workers")
    parser.add_argument("--checks", type=int, default=50, help="checks per burst (default 50)")
    parser.add_argument("--rounds", type=int, default=1, help="bursts per worker count")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="ichor-bench-workers-"))
    try:
        work, base, touched = build_work_repo(workdir / "work")
        files = work.git("ls-files", "-z").count("\0")
        rates: dict[int, list[float]] = {1: [], 2: []}
        cpu: dict[int, list[float]] = {1: [], 2: []}
        with FakeGitHub(workdir / "forge-git") as fake:
            forge = Forge(fake, work, base, touched)
            bot = Bot(workdir)
            bot.repositories.add(forge.full_name)
            bot.start()
            try:
                for _ in range(args.rounds):  # alternated, so load on the machine hits both
                    for workers in rates:
                        rate, seconds = burst(bot, forge, workdir, workers, args.checks)
                        rates[workers].append(rate)
                        cpu[workers].append(seconds)
            finally:
                bot.stop()
        print(f"repository: {files:,} files, {len(touched)} targets; {os.cpu_count()} CPUs")
        print(f"a burst of {args.checks} pull request checks, each changing one file")
        print()
        for workers, values in rates.items():
            shown = ", ".join(f"{v:.2f}" for v in values)
            label = f"{workers} worker{'s' if workers > 1 else ''}"
            print(
                f"{label:<9}  {max(values):6.2f} checks/s  (best of {len(values)}: {shown});"
                f"  {min(cpu[workers]) * 1000:.0f} ms of worker CPU per check"
            )
        print(f"ratio 2 workers / 1 worker: {max(rates[2]) / max(rates[1]):.2f}x")
        load = os.getloadavg()[0]
        print(f"load average at the end: {load:.1f} (other work on the machine lowers both)")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
