"""The sweep in a worker's process (design.md 7): real Redis (its queue and state), the fake
forges over HTTP, a clock set by hand. What it queues is read back from the queue; nothing
runs the jobs here (the end-to-end scenario does, tests/e2e/test_missed_deliveries.py)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.forges.base import CheckOutput, Conclusion, Reconciling
from bot.queueing.base import job_id_of
from bot.queueing.redis_queue import RedisDeliveryQueue, marker_key
from bot.reconcile.events import EVENT_NAME
from bot.settings import Settings
from bot.state import keys
from bot.state.base import pull_key
from bot.state.redis_state import redis_state
from bot.state.sweeps import MemorySweeps
from bot.webhooks import ChangeRequestEvent, event_from_dict
from tests.fakeforge import FakeGitHub
from tests.fakeforge.gitea import FakeGitea
from tests.fakeforge.gitlab import FakeGitLab
from tests.fakeforge.httpserver import LocalServer, Request, Response
from tests.support.clock import ManualClock
from tests.support.redis_url import SHARED_REDIS_URL
from workers.context import WorkerContext, build_context
from workers.reconcile import OUT_OF_TIME, RATE_LIMITED, REDELIVERING
from workers.sweep import run_sweep

BASE = "b" * 40
GRACE = 900.0


def sha(n: int) -> str:
    return f"{n:040x}"


@dataclass
class Swept:
    """A worker's context on one fake forge, and what its sweeps queued."""

    forge: str  # the forge's name in keys and jobs: github, gitlab, gitea
    fake: Any
    context: WorkerContext
    queue: RedisDeliveryQueue
    clock: ManualClock
    full_name: str
    pulls: dict[int, str] = field(default_factory=dict)  # number → head

    @property
    def sweeps(self) -> MemorySweeps:
        assert isinstance(self.context.sweeps, MemorySweeps)
        return self.context.sweeps

    def sweep(self) -> dict[str, Any]:
        return run_sweep(self.context)

    def queued(self) -> list[ChangeRequestEvent]:
        """The events of the checks queued so far, in order."""
        found = []
        for job in self.queue.queue.get_jobs():
            event = event_from_dict(job.args[2])
            assert isinstance(event, ChangeRequestEvent)
            found.append(event)
        return found

    def pull_key(self, number: int) -> str:
        return pull_key(self.forge, self.full_name, number)

    def post_result(self, number: int) -> None:
        """A check posts its verdict on the pull request's head (another worker, say)."""
        adapter = self.context.adapter_for(self.forge, self.full_name).forge
        assert isinstance(adapter, Reconciling)
        repo = next(r for r in adapter.repositories(limit=10) if r.full_name == self.full_name)
        check = adapter.start_check(repo, self.pulls[number], external_id="elsewhere")
        adapter.complete_check(repo, check, CheckOutput(Conclusion.SUCCESS, "ok", "s", "t"))

    def calls(self, part: str) -> list[str]:
        return [c for c in self.fake.calls_summary() if part in c]


def _settings(env: dict[str, str], tmp_path: Path, queue: str, **more: Any) -> Settings:
    values: dict[str, Any] = {k.removeprefix("ICHOR_").lower(): v for k, v in env.items()}
    return Settings(
        **values,
        redis_url=SHARED_REDIS_URL,
        queue_name=queue,
        data_dir=tmp_path / "data",
        reconcile_grace=GRACE,
        **more,
    )


@contextlib.contextmanager
def swept(forge: str, tmp_path: Path, **settings: Any) -> Iterator[Swept]:
    full_name = f"octo-{uuid.uuid4().hex[:8]}/gitops"
    queue_name = f"sweep-{uuid.uuid4().hex[:10]}"
    connection = redis.Redis.from_url(SHARED_REDIS_URL)
    with contextlib.ExitStack() as stack:
        fake: Any
        if forge == "github":
            fake = stack.enter_context(FakeGitHub(tmp_path / "git"))
            fake.add_repo(full_name, installation_id=42)
        elif forge == "gitlab":
            fake = stack.enter_context(FakeGitLab())
            fake.add_project(full_name)
        else:
            fake = stack.enter_context(FakeGitea(tmp_path / "git"))
            fake.add_repo(full_name)
        queue = RedisDeliveryQueue(SHARED_REDIS_URL, queue_name)
        clock = ManualClock(1_700_000_000.0)
        context = build_context(
            _settings(fake.env(), tmp_path, queue_name, **settings),
            redis_state(connection),
            queue,
            queue=queue,
            sweeps=MemorySweeps(),
        )
        context.clock = clock
        run = Swept(forge, fake, context, queue, clock, full_name)
        try:
            yield run
        finally:
            stale = [k for k in connection.scan_iter(f"rq:*{queue_name}*")]
            for prefix in ("ichor:heads", "ichor:checked"):
                stale += connection.scan_iter(f"{prefix}:{forge}:{full_name}:*")
            for job in queue.queue.job_ids:
                stale += [marker_key(job), f"rq:job:{job}"]
            stale += connection.scan_iter(f"{keys.history(queue_name)}:*")
            if stale:
                connection.delete(*stale)
            connection.srem("rq:queues", f"rq:queue:{queue_name}")
            queue.close()
            connection.close()


def open_pull(run: Swept, number: int, head: str) -> None:
    run.pulls[number] = head
    if run.forge == "github":
        run.fake.add_pull(run.full_name, number, head_sha=head, base_sha=BASE)
    elif run.forge == "gitlab":
        run.fake.add_merge_request(run.full_name, number, head, BASE, f"feature-{number}", "main")
    else:
        run.fake.add_pull(run.full_name, number, head_sha=head, base_sha=BASE)


FORGES = ["github", "gitlab", "gitea"]


@pytest.mark.parametrize("forge", FORGES)
def test_a_head_without_a_result_gets_one_check_queued_once(forge: str, tmp_path: Path) -> None:
    with swept(forge, tmp_path) as run:
        open_pull(run, 7, sha(7))
        summary = run.sweep()
        assert summary[forge]["queued"] == 1
        (event,) = run.queued()
        assert (event.number, event.head_sha, event.base_ref) == (7, sha(7), "main")
        assert event.repo.full_name == run.full_name and event.repo.clone_url
        # Listed on the status page as a delivery, with its job.
        assert run.context.deliveries is not None
        (listed,) = [d for d in run.context.deliveries.deliveries() if d.event == EVENT_NAME]
        assert (listed.repository, listed.outcome) == (run.full_name, "queued")
        assert listed.job_id == run.queue.queue.job_ids[0]
        # The next run finds the job has it: nothing more is queued, and it does not even ask
        # the forge about the head.
        before = len(run.fake.calls)
        run.clock.advance(300)
        assert run.sweep()[forge]["queued"] == 0 and len(run.queued()) == 1
        asked = [str(c) for c in run.fake.calls[before:]]
        assert not [c for c in asked if sha(7) in c], asked
        (record,) = run.sweeps.repos()
        assert (record.open, record.waiting, record.queued, record.done) == (1, 1, 0, 0)
        # Once the check ended, the head is done: no forge request about it either.
        run.context.state.checked.remember_checked(run.pull_key(7), sha(7))
        run.sweep()
        assert run.sweeps.repos()[0].done == 1 and len(run.queued()) == 1


@pytest.mark.parametrize("forge", FORGES)
def test_heads_with_a_result_or_a_job_are_left_alone(forge: str, tmp_path: Path) -> None:
    with swept(forge, tmp_path) as run:
        for n in (1, 2, 3):
            open_pull(run, n, sha(n))
        run.post_result(1)  # a verdict on the forge, which the bot has no record of
        state = run.context.state
        state.heads.record_head(run.pull_key(2), sha(2), redelivery=False)  # its job waits
        state.checked.remember_checked(run.pull_key(3), sha(3))
        run.sweep()
        assert run.queued() == []
        (record,) = run.sweeps.repos()
        assert (record.done, record.waiting, record.queued) == (2, 1, 0)
        assert state.checked.checked(run.pull_key(1), sha(1))  # the forge's answer is noted
        # A job that never ends is given the grace, and then a check is queued anyway.
        run.clock.advance(GRACE - 1)
        run.sweep()
        assert run.queued() == []
        run.clock.advance(1)
        run.sweep()
        assert [e.number for e in run.queued()] == [2]


def test_github_lists_again_by_etag_and_judges_the_kept_listing(tmp_path: Path) -> None:
    with swept("github", tmp_path) as run:
        open_pull(run, 7, sha(7))
        run.sweep()
        run.sweep()
        assert [c.rsplit(" ", 1)[1] for c in run.calls("/pulls ")] == ["200", "304"]
        assert run.sweeps.repos()[0].unchanged and run.sweeps.repos()[0].open == 1
        open_pull(run, 8, sha(8))
        run.sweep()
        assert run.calls("/pulls ")[-1].endswith(" 200")
        assert sorted(e.number for e in run.queued()) == [7, 8]


class Receiver:
    """The bot's webhook as GitHub reaches it: what was redelivered."""

    def __init__(self) -> None:
        self.received: list[Request] = []
        self.server = LocalServer(self.answer)

    def answer(self, req: Request) -> Response:
        self.received.append(req)
        return Response(202, {"status": "queued"})


def test_github_asks_again_for_lost_deliveries_and_leaves_the_repository_to_them(
    tmp_path: Path,
) -> None:
    receiver = Receiver()
    receiver.server.start()
    try:
        with swept("github", tmp_path) as run:
            run.fake.set_webhook(receiver.server.url, "s3cret")
            open_pull(run, 7, sha(7))
            payload = {"action": "opened", "installation": {"id": 42}}
            payload["repository"] = {"full_name": run.full_name}
            now = run.clock()
            lost = run.fake.add_delivery("pull_request", payload, at=now - 60)
            taken = run.fake.add_delivery("pull_request", payload, at=now - 50)
            old = run.fake.add_delivery("pull_request", payload, at=now - 7 * 3600)
            # The bot took one after all (GitHub gave up waiting for its answer).
            run.queue.redis.set(marker_key(job_id_of("github", taken["guid"])), "1", ex=60)
            summary = run.sweep()["github"]
            assert [r.headers["x-github-delivery"] for r in receiver.received] == [lost["guid"]]
            assert summary["redelivered"] == 1 and summary["queued"] == 0
            (repo,) = run.sweeps.repos()
            assert repo.note == REDELIVERING  # its delivery is on the way: not queued twice
            (done,) = run.sweeps.runs()
            assert (done.failed_deliveries, done.not_redelivered) == (2, {"processed": 1})
            assert run.sweeps.counts()[("github", "redelivered")] == 1
            # Asked for lately: not again; the repository is looked at once more.
            run.sweep()
            assert len(receiver.received) == 1
            assert [e.number for e in run.queued()] == [7]  # nothing reached a bot here
            run.queue.redis.delete(marker_key(job_id_of("github", taken["guid"])))
            assert old["guid"] not in {r.headers["x-github-delivery"] for r in receiver.received}
    finally:
        receiver.server.stop()


def test_the_run_is_bounded_and_yields_to_the_rate_budget(tmp_path: Path) -> None:
    with swept("github", tmp_path, reconcile_checks=2) as run:
        for n in (1, 2, 3):
            open_pull(run, n, sha(n))
        run.sweep()
        assert len(run.queued()) == 2 and run.sweeps.repos()[0].left == 1
        run.clock.advance(60)
        run.sweep()
        assert len(run.queued()) == 3  # the one left is the next run's
        # The installation's rate limit runs low, as GitHub's answers say (each answer is
        # kept, so a budget put in the store by hand would be overwritten by the next one):
        # the repository waits, and its pull requests are not listed.
        run.fake.use_rate_limit(10)
        open_pull(run, 4, sha(4))
        before = len(run.fake.calls)
        summary = run.sweep()["github"]
        assert summary["deferred"] == 1 and run.sweeps.repos()[0].note == RATE_LIMITED
        assert not [c for c in run.fake.calls[before:] if "/pulls" in c.path]
        assert run.sweeps.counts()[("github", "deferred")] == 1


def test_time_is_bounded(tmp_path: Path) -> None:
    # Each look at the clock takes ten seconds: the run's start and the first repository's fit
    # in 25, the second does not.
    with swept("gitea", tmp_path, reconcile_seconds=25) as run:
        other = f"{run.full_name}-two"
        run.fake.add_repo(other)
        ticking: Callable[[], float] = run.clock

        def slow() -> float:  # every look at the clock, ten seconds later
            run.clock.advance(10)
            return ticking()

        run.context.clock = slow
        summary = run.sweep()["gitea"]
        assert (summary["reconciled"], summary["deferred"]) == (1, 1)
        notes = sorted(r.note for r in run.sweeps.repos())
        assert notes == ["", OUT_OF_TIME]


def test_a_forge_that_fails_is_recorded_and_the_sweep_goes_on(tmp_path: Path) -> None:
    unreachable = {"gitlab_token": "glpat-any", "gitlab_url": "http://127.0.0.1:9"}
    with swept("gitea", tmp_path, **unreachable) as run:
        open_pull(run, 7, sha(7))
        summary = run.sweep()
        assert "problem" in summary["gitlab"] and summary["gitea"]["queued"] == 1
        runs = {r.forge: r for r in run.sweeps.runs()}
        assert "GitLab" in runs["gitlab"].problem and runs["gitea"].queued == 1
        assert run.sweeps.counts()[("gitlab", "failed")] == 1


def test_no_sweep_without_the_redis_queue(tmp_path: Path) -> None:
    context = build_context(Settings(data_dir=tmp_path), redis_state(redis.Redis()))
    assert run_sweep(context) == {"sweep": "off"}
