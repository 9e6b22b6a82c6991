"""Change latency end to end: a ``/approve <ns>/<name>`` comment on an open pull request →
``ichor-bot serve`` → Redis → ``ichor-bot worker`` → the change engine (fetch the base, gate
it and the result, build the commit in the mirror, push through ``git http-backend`` with the
installation token) → the approval pull request opened on the fake GitHub. The repository is
``bench_check.py``'s 20,000-file one, its touched target given ``approval: {kind: ConfigMap,
field: data.state}`` and a pending ConfigMap per run, so every run opens a new pull request.
One long-lived worker, its mirror and parse cache warmed by one change before the clock.

The baseline, alternated with the bot's runs in the same run: the same one-line edit made
the way a person would, over the same http-backend with a token: ``git clone --depth 1``,
edit, ``git commit``, ``git push`` to a new branch (no pull request: that is one API call).
Printed as p50/p95 and the ratio bot / person. Nothing is asserted. The repositories, the
worker's mirror and the clones are on ``/dev/shm`` when it is writable (``ram_disk``).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_check import FILES, TOUCHED, Worker, build_work_repo, pct  # noqa: E402

from bot.changes.branch import change_branch, readable_branch  # noqa: E402
from bot.gate.policy import TargetPolicy  # noqa: E402
from bot.git.repository import git_environment  # noqa: E402
from tests.e2e.harness import Bot  # noqa: E402
from tests.fakeforge import FakeGitHub  # noqa: E402
from tests.support.gitrepo import WorkRepo  # noqa: E402

COMMENT_FIXTURE = ROOT / "fixtures/webhooks/github/issue_comment__created-on-pr-go-scm.json"
NAMESPACE = "ichor-bench"
MAINTAINER = "maria"
AUTHOR = "octocat"
NUMBER = 1  # the pull request the comments are written on
PENDING = "  state: pending\n"


def configmap(name: str) -> str:
    return (
        "# waits for /approve (bench_changes.py)\n"
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        f"  name: {name}\n"
        f"  namespace: {NAMESPACE}\n"
        "data:\n"
        "  mode: prod\n" + PENDING
    )


def with_approvals(work: WorkRepo, targets: list[TargetPolicy], count: int) -> list[str]:
    """The touched target gets ``approval`` and ``count`` pending ConfigMaps, committed on
    main; their paths, in the order the runs take them."""
    lines = []
    for t in targets:
        approval = ", approval: {kind: ConfigMap, field: data.state}" if t.path == TOUCHED else ""
        lines.append(f"  - {{name: {t.name}, path: {t.path}{approval}}}\n")
    config = "version: 1\ntargets:\n" + "".join(lines) + "commands:\n  min_permission: write\n"
    paths = [f"{TOUCHED}/v1/configmaps/{NAMESPACE}/approve-{i}.yaml" for i in range(count)]
    files: dict[str, str | None] = {p: configmap(f"approve-{i}") for i, p in enumerate(paths)}
    work.commit({".ichor.yaml": config, **files}, "approval target")
    return paths


def object_name(path: str) -> str:
    return Path(path).stem


@dataclass(frozen=True, slots=True)
class BotRun:
    opened: float
    replied: float
    calls: int


@dataclass(frozen=True, slots=True)
class PersonRun:
    clone: float
    edit_commit: float
    push: float

    @property
    def total(self) -> float:
        return self.clone + self.edit_commit + self.push


class Scenario:
    """The fake GitHub with the repository, one open pull request, and the two ways to
    make the change."""

    def __init__(
        self, fake: FakeGitHub, bot: Bot, work: WorkRepo, scratch: Path, target: str
    ) -> None:
        self.fake, self.bot, self.work, self.scratch = fake, bot, work, scratch
        self.target = target  # the name of the target the changes act in
        self.full_name = f"bench-{uuid.uuid4().hex[:8]}/gitops"  # the shared Redis keeps state
        bot.repositories.add(self.full_name)
        fake.add_repo(self.full_name, installation_id=42)
        fake.set_permission(self.full_name, MAINTAINER, "write")
        fake.set_permission(self.full_name, AUTHOR, "write")
        self.bare = fake.make_bare_repo(self.full_name)
        base = work.git("rev-parse", "HEAD")
        head = work.commit({"README.md": "the pull request the comments are on\n"}, "feature")
        work.git("branch", "-q", "-f", "feature", head)
        work.git("checkout", "-q", "-B", "main", base)
        work.set_ref(f"refs/pull/{NUMBER}/head", head)
        work.publish(self.bare)
        fake.add_pull(self.full_name, NUMBER, head_sha=head, base_sha=base, user=AUTHOR)
        # A person's own token for the baseline: the same server, the same check of it.
        self.person_env = {
            **git_environment(),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": MAINTAINER,
            "GIT_AUTHOR_EMAIL": f"{MAINTAINER}@example.invalid",
            "GIT_COMMITTER_NAME": MAINTAINER,
            "GIT_COMMITTER_EMAIL": f"{MAINTAINER}@example.invalid",
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": f"http.{fake.git_url}/.extraHeader",
            "GIT_CONFIG_VALUE_0": fake.basic_auth_header(fake.issue_token(42, ttl=3600)),
        }

    def bot_run(self, path: str, timeout: float = 300) -> BotRun:
        """From the comment's delivery to the approval pull request, opened, and on to the
        reply naming it (the job's last call, so the next run starts on an idle worker)."""
        name = object_name(path)
        body = f"/approve {NAMESPACE}/{name}"
        comment = self.fake.add_comment(self.full_name, NUMBER, body, user=MAINTAINER)
        branch = self.branch(name)
        payload = self._comment_payload(comment["id"], body)
        reply = f"POST /repos/{self.full_name}/issues/{NUMBER}/comments 201"
        before = len(self.fake.calls)
        started = time.perf_counter()
        assert self.bot.post("issue_comment", payload) == 202
        deadline = started + timeout
        opened = None
        while time.perf_counter() < deadline:
            if opened is None and any(
                p["head"]["ref"] == branch for p in self.fake.pulls(self.full_name)
            ):
                opened = time.perf_counter() - started
            # A call is recorded once answered: the pull request exists a moment before.
            made = self.fake.calls_summary()[before:]
            if opened is not None and reply in made:
                last = [c["body"] for c in self.fake.comments(self.full_name, NUMBER)][-1]
                if not last.startswith("Opened "):
                    raise RuntimeError(f"{body!r} was answered: {last}")
                return BotRun(opened, time.perf_counter() - started, len(made))
            time.sleep(0.01)
        replies = [c["body"] for c in self.fake.comments(self.full_name, NUMBER)][-2:]
        raise RuntimeError(f"no pull request for {body!r}; replies: {replies}")

    def branch(self, name: str) -> str:
        """The approval's branch: readable, as no other object holds it here."""
        identity = ("", "ConfigMap", NAMESPACE, name)
        return readable_branch("approve", identity) or change_branch(
            "approve", self.target, identity
        )

    def assert_pushed(self, path: str) -> None:
        """The bot's branch and the person's changed the same one line of the same file."""
        name = object_name(path)
        diffs = [
            self._bare("diff", "--numstat", "main", ref)
            for ref in (self.branch(name), f"person/approve-{name}")
        ]
        if diffs != [f"1\t1\t{path}\n"] * 2:
            raise RuntimeError(f"{path}: the changes differ from one line: {diffs}")

    def _bare(self, *args: str) -> str:
        argv = ["git", "-C", str(self.bare), *args]
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout

    def _comment_payload(self, comment_id: int, body: str) -> dict[str, Any]:
        payload: dict[str, Any] = copy.deepcopy(json.loads(COMMENT_FIXTURE.read_text()))
        owner, name = self.full_name.split("/")
        clone = self.fake.clone_url(self.full_name)
        repo = payload["repository"]
        repo.update(full_name=self.full_name, name=name, clone_url=clone)
        repo.update(html_url=clone.removesuffix(".git"), default_branch="main")
        repo["owner"]["login"] = owner
        payload["action"] = "created"
        payload["issue"]["number"] = NUMBER
        payload["comment"].update(id=comment_id, body=body)
        payload["comment"]["user"].update(login=MAINTAINER, type="User")
        payload["sender"]["login"] = MAINTAINER
        payload["installation"] = {"id": 42}
        return payload

    def person_run(self, path: str) -> PersonRun:
        """The same edit by hand: a shallow clone, the one line, a commit, a push."""
        clone = self.scratch / f"clone-{uuid.uuid4().hex[:6]}"
        name = object_name(path)
        started = time.perf_counter()
        self._git(None, "clone", "-q", "--depth", "1", self.fake.clone_url(self.full_name), clone)
        cloned = time.perf_counter()
        file = clone / path
        file.write_text(file.read_text().replace(PENDING, "  state: approved\n", 1))
        self._git(clone, "commit", "-q", "-am", f"approve ConfigMap {NAMESPACE}/{name}")
        committed = time.perf_counter()
        self._git(clone, "push", "-q", "origin", f"HEAD:refs/heads/person/approve-{name}")
        pushed = time.perf_counter()
        shutil.rmtree(clone)
        return PersonRun(cloned - started, committed - cloned, pushed - committed)

    def _git(self, cwd: Path | None, *args: str | Path) -> None:
        argv = ["git", *(["-C", str(cwd)] if cwd else []), *map(str, args)]
        proc = subprocess.run(argv, env=self.person_env, capture_output=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:4])}: {proc.stderr.decode(errors='replace')}")


def ram_disk() -> str | None:
    """Where the run's files go by default: on a shared virtual disk, writing a clone's
    20,000 files and deleting them took ten times what git itself did, so the baseline
    measured the disk; both ways work on the same medium either way."""
    shm = Path("/dev/shm")  # noqa: S108 - mkdtemp makes a private directory in it
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def ms(values: list[float]) -> str:
    return f"{pct(values, 0.5) * 1000:>6.0f}ms  {pct(values, 0.95) * 1000:>6.0f}ms"


def report(bots: list[BotRun], person: list[PersonRun], warm: BotRun, first: PersonRun) -> None:
    opened, totals = [b.opened for b in bots], [p.total for p in person]
    print(f"{'':<38}  {'runs':>4}  {'p50':>8}  {'p95':>8}")
    rows = (
        ("bot: comment → pull request opened", opened),
        ("  … → the reply naming it", [b.replied for b in bots]),
        ("person: clone, edit, commit, push", totals),
        ("  of which clone --depth 1", [p.clone for p in person]),
        ("  of which edit + commit", [p.edit_commit for p in person]),
        ("  of which push", [p.push for p in person]),
    )
    for label, values in rows:
        runs = f"{len(values):>4}" if not label.startswith(" ") else " " * 4
        print(f"{label:<38}  {runs}  {ms(values)}")
    print()
    p50, p95 = (pct(opened, q) / pct(totals, q) for q in (0.5, 0.95))
    print(f"ratio bot / person: p50 {p50:.2f}x, p95 {p95:.2f}x")
    print(
        f"warm-up, not timed: the bot's first change {warm.opened * 1000:.0f} ms (the mirror "
        f"cloned, every target parsed); the person's first {first.total * 1000:.0f} ms"
    )
    calls = sorted({b.calls for b in bots})
    print(f"API calls per timed change, the reply included: {calls} (one more: the")
    print("commenter's permission looked up again, its answer being kept 60 s)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (a loaded machine slows both)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Ichor Bot change latency benchmark")
    parser.add_argument("--runs", type=int, default=15, help="timed runs of each (default 15)")
    parser.add_argument(
        "--files", type=int, default=FILES, help=f"repository size (default {FILES:,})"
    )
    parser.add_argument(
        "--dir",
        default=ram_disk(),
        help="where the repositories, the mirror and the clones go (default: /dev/shm when "
        "it is writable, else the temporary directory)",
    )
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="ichor-bench-changes-", dir=args.dir))
    try:
        work, targets, _ = build_work_repo(workdir / "work", args.files)
        paths = with_approvals(work, targets, args.runs + 1)
        count = work.git("ls-files", "-z").count("\0")
        bots: list[BotRun] = []
        person: list[PersonRun] = []
        with FakeGitHub(workdir / "forge-git") as fake:
            touched = next(t.name for t in targets if t.path == TOUCHED)
            scenario = Scenario(fake, Bot(workdir), work, workdir, touched)
            bot = scenario.bot
            bot.start()
            worker = Worker(bot, fake, workdir / "worker-data")
            try:
                warm_bot = scenario.bot_run(paths[0])  # the mirror's clone, the parse cache
                warm_person = scenario.person_run(paths[0])  # the server's caches, alike
                for path in paths[1:]:  # alternated, so load on the machine hits both
                    bots.append(scenario.bot_run(path))
                    person.append(scenario.person_run(path))
            except RuntimeError:
                print(Path(worker.log.name).read_text()[-3000:], file=sys.stderr)
                raise
            finally:
                worker.stop()
                bot.stop()
            for path in paths:
                scenario.assert_pushed(path)
            problems = fake.validation_errors + fake.auth_failures + fake.unimplemented
            if problems:
                raise RuntimeError(f"the fake GitHub saw problems: {problems[:3]}")
        print(f"repository: {count:,} files, {len(targets)} targets; each change edits one line")
        print(f"of a pending ConfigMap in {TOUCHED} (its target has `approval`);")
        print(f"repositories, mirror and clones under {workdir.parent}")
        print()
        report(bots, person, warm_bot, warm_person)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
