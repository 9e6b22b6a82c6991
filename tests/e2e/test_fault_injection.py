"""Fault injection, end to end: 200 deliveries across GitHub, GitLab and Gitea to ``ichor-bot
serve`` and two ``ichor-bot worker`` processes on a Redis of the test's own, while one worker is
SIGKILLed twice (a new one started each time, as a supervisor would) and Redis is stopped for
5 s once. Afterwards every delivery has exactly one completed check run, or one final commit
status, on its fake forge: none left in progress, none duplicated.

Recovery intervals are the short ones of the harness (``FAST_RECOVERY``); the defaults recover
within about a minute.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.drivers import Gitea, GitHub, GitLab
from tests.e2e.harness import Bot, WorkerProcess, running_bot
from tests.fakeforge import FakeGitHub
from tests.fakeforge.gitea import FakeGitea
from tests.fakeforge.gitlab import FakeGitLab
from tests.support.gitops import configmap
from tests.support.redis_server import RedisServer

PER_FORGE = {"github": 67, "gitlab": 67, "gitea": 66}
GITLAB_FINAL = {"success", "failed", "canceled"}
GITEA_FINAL = {"success", "failure", "error"}
DEADLINE = 150.0  # seconds for the whole run, faults included


@dataclass(frozen=True)
class Delivery:
    forge: str  # the route: github, gitlab, gitea
    event: str
    payload: dict[str, Any]
    sha: str
    id: str


def _heads(work: Any, count: int, prefix: str) -> list[str]:
    """``count`` commits, each adding one accepted ConfigMap: a head per pull request."""
    return [
        work.commit({f"clusters/prod/v1/configmaps/web/{prefix}-{i}.yaml": configmap(f"c{i}")})
        for i in range(count)
    ]


@pytest.fixture
def forges(tmp_path: Path) -> Iterator[tuple[FakeGitHub, FakeGitLab, FakeGitea]]:
    with (
        FakeGitHub(tmp_path / "gh-git") as github,
        FakeGitLab(tmp_path / "gl-git") as gitlab,
        FakeGitea(tmp_path / "gt-git") as gitea,
    ):
        yield github, gitlab, gitea


def _deliveries(
    bot: Bot, forges: tuple[FakeGitHub, FakeGitLab, FakeGitea], tmp_path: Path
) -> tuple[list[Delivery], Callable[[Delivery], str | None], Callable[[], dict[str, int]]]:
    """Every pull request on its forge, and a reader of a delivery's result there: ``done``
    (one completed check, one final status), ``pending``, or what is wrong."""
    github, gitlab, gitea = forges
    gh = GitHub(github, bot, tmp_path / "gh")
    gl = GitLab(gitlab, bot, tmp_path / "gl")
    gt = Gitea(gitea, bot, tmp_path / "gt")
    out: list[Delivery] = []
    pairs = (("gh", gh, "pull_request"), ("gl", gl, "merge_request"), ("gt", gt, "pull_request"))
    for prefix, forge, event in pairs:
        forge.base()
        heads = _heads(forge.local, PER_FORGE[forge.route], prefix)
        for number, head in enumerate(heads, start=1):
            payload = forge.pull_request(head, number=number, deliver=False)
            out.append(Delivery(forge.route, event, payload, head, str(uuid.uuid4())))

    def result(d: Delivery) -> str | None:
        if d.forge == "github":
            runs = [r for r in github.check_runs(gh.full_name) if r["external_id"] == d.id]
            if len(runs) > 1:
                return f"{len(runs)} check runs"
            return "done" if runs and runs[0]["status"] == "completed" else None
        if d.forge == "gitlab":
            ours = [s for s in gitlab.statuses(gl.full_name, d.sha) if s["name"] == gl_name]
            if len(ours) > 1:
                return f"{len(ours)} statuses"
            return "done" if ours and ours[0]["history"][-1] in GITLAB_FINAL else None
        states = [s["status"] for s in gitea.statuses(gt.full_name, d.sha)]
        return "done" if states and states[-1] in GITEA_FINAL else None

    def tally() -> dict[str, int]:
        runs = github.check_runs(gh.full_name)
        gl_statuses = [
            s for d in out if d.forge == "gitlab" for s in gitlab.statuses(gl.full_name, d.sha)
        ]
        gt_statuses = [
            s for d in out if d.forge == "gitea" for s in gitea.statuses(gt.full_name, d.sha)
        ]
        return {
            "github check runs": len(runs),
            "github in progress": sum(r["status"] != "completed" for r in runs),
            "gitlab statuses": len(gl_statuses),
            "gitlab not final": sum(s["history"][-1] not in GITLAB_FINAL for s in gl_statuses),
            "gitea status posts": len(gt_statuses),
            "gitea final posts": sum(s["status"] in GITEA_FINAL for s in gt_statuses),
        }

    gl_name = "ichor/acceptance"
    return out, result, tally


def test_every_delivery_ends_once_through_killed_workers_and_a_redis_outage(
    tmp_path: Path, forges: tuple[FakeGitHub, FakeGitLab, FakeGitea]
) -> None:
    github, gitlab, gitea = forges
    env = {**github.env(), **gitlab.env(), **gitea.env()}
    with RedisServer(tmp_path / "redis") as server:
        (tmp_path / "bot").mkdir()
        with running_bot(tmp_path / "bot", server.url) as bot:
            setup = time.monotonic()
            deliveries, result, tally = _deliveries(bot, forges, tmp_path)
            print(f"\nsetup: {time.monotonic() - setup:.1f} s")
            random.Random(11).shuffle(deliveries)
            data = tmp_path / "worker-data"
            victim = bot.start_worker(env, data)
            survivor = bot.start_worker(env, data)
            answers: list[int] = []

            def post_all() -> None:
                for d in deliveries:
                    answers.append(bot.post(d.event, d.payload, d.id, forge=d.forge))
                    time.sleep(0.08)

            poster = threading.Thread(target=post_all, daemon=True)
            started = time.monotonic()
            poster.start()

            def done_count() -> int:
                return sum(result(d) == "done" for d in deliveries)

            def wait_until(predicate: Callable[[], bool], what: str) -> None:
                while not predicate():
                    if time.monotonic() - started > DEADLINE:
                        left = [
                            (d.id, bot.job_status(f"{d.forge}-{d.id}"), result(d))
                            for d in deliveries
                            if result(d) != "done"
                        ]
                        raise AssertionError(
                            f"timed out waiting for {what}: {len(left)} not done: {left[:10]}"
                        )
                    time.sleep(0.05)

            recoveries: list[str] = []

            def kill(worker: WorkerProcess, at: int) -> WorkerProcess:
                """SIGKILL ``worker`` in the middle of a job, once ``at`` checks are done."""
                wait_until(lambda: done_count() >= at, f"{at} done")
                flying: set[str] = set()

                def busy() -> bool:
                    flying.update(bot.jobs_running_on(worker))
                    return bool(flying)

                wait_until(busy, "the worker to be in the middle of a job")
                worker.kill()
                killed = time.monotonic()
                # The job may have ended between the look and the kill: then nothing was lost.
                cut = {j for j in flying if bot.job_status(j) != "finished"}
                replacement = bot.start_worker(env, data)
                wait_until(
                    lambda: all(bot.job_status(j) == "finished" for j in flying),
                    f"jobs of the killed worker {sorted(flying)}",
                )
                recoveries.append(
                    f"worker killed in the middle of {sorted(cut)}: finished "
                    f"{time.monotonic() - killed:.2f} s later"
                    if cut
                    else f"worker killed just after {sorted(flying)} finished"
                )
                return replacement

            victim = kill(victim, 30)
            wait_until(lambda: done_count() >= 80, "80 done")
            server.stop()
            stopped = time.monotonic()
            time.sleep(5)
            server.start()
            restarted = time.monotonic()
            wait_until(lambda: done_count() >= 90, "progress after Redis is back")
            recoveries.append(
                f"Redis stopped {restarted - stopped:.2f} s: 10 more checks done "
                f"{time.monotonic() - restarted:.2f} s after it was back"
            )
            victim = kill(victim, 130)
            poster.join(timeout=DEADLINE)
            wait_until(lambda: done_count() == len(deliveries), "every delivery")
            elapsed = time.monotonic() - started
            outcomes = [result(d) for d in deliveries]
            by_forge = {
                forge: sum(
                    1
                    for d, o in zip(deliveries, outcomes, strict=True)
                    if d.forge == forge and o == "done"
                )
                for forge in PER_FORGE
            }
            print(
                f"\n{len(deliveries)} deliveries in {elapsed:.1f} s; answers "
                f"{ {a: answers.count(a) for a in sorted(set(answers))} }; done by forge "
                f"{by_forge}; {survivor.alive()=}"
            )
            for line in recoveries:
                print("  " + line)
            counts = tally()
            print(f"  {counts}")
            assert all(o == "done" for o in outcomes), [o for o in outcomes if o != "done"]
            assert set(answers) <= {202}, answers
            assert survivor.alive(), survivor.log
            assert counts["github check runs"] == PER_FORGE["github"]
            assert counts["github in progress"] == 0
            assert counts["gitlab statuses"] == PER_FORGE["gitlab"]
            assert counts["gitlab not final"] == 0
            assert counts["gitea final posts"] == PER_FORGE["gitea"]
            for fake in forges:
                fake.assert_clean()
