"""End to end, the way the failures were found: ``ichor-bot serve`` and real ``ichor-bot worker``
processes on a Redis of the test's own, and the fake GitHub holding an answer so a worker can
be killed in the middle of a job (SIGKILL: no clean-up), or Redis stopped under it."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.drivers import GitHub
from tests.e2e.harness import ROOT, Bot, running_bot
from tests.fakeforge import FakeGitHub
from tests.fakeforge.fixtures import fake_github  # noqa: F401 - the fixture
from tests.support.gitops import configmap
from tests.support.redis_server import RedisServer

COMPLETE_RUN = r"/repos/[^/]+/[^/]+/check-runs/\d+"


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as server:
        yield server


@pytest.fixture
def bot(tmp_path: Path, own_redis: RedisServer) -> Iterator[Bot]:
    (tmp_path / "bot").mkdir()
    with running_bot(tmp_path / "bot", own_redis.url) as running:
        yield running


@pytest.fixture
def scenario(fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> GitHub:  # noqa: F811
    return GitHub(fake_github, bot, tmp_path)


def _clean_pull(scenario: GitHub, number: int) -> dict[str, object]:
    scenario.base()
    head = scenario.commit({"clusters/prod/v1/configmaps/web/extra.yaml": configmap("x")})
    return scenario.pull_request(head, number=number, deliver=False)


def _statuses(scenario: GitHub) -> list[str]:
    return [r["status"] for r in scenario.check_runs()]


def test_a_killed_workers_job_is_retried_soon_and_completes_the_check_run_it_started(
    scenario: GitHub, bot: Bot
) -> None:
    payload = _clean_pull(scenario, 7)
    held = scenario.fake.hold("PATCH", COMPLETE_RUN)
    first = bot.start_worker(scenario.fake.env(), scenario.data_dir)
    delivery = str(uuid.uuid4())
    assert bot.post("pull_request", payload, delivery) == 202
    assert held.reached.wait(60), first.log
    first.kill()
    killed = time.monotonic()
    held.drop()
    assert _statuses(scenario) == ["in_progress"]
    second = bot.start_worker(scenario.fake.env(), scenario.data_dir)
    # The dead worker's lease lapses, the second worker's reaper queues the job again, and
    # the retry finds the check run by its commit and delivery instead of making another.
    scenario.fake.wait_for(lambda: _statuses(scenario) == ["completed"], timeout=120)
    print(f"\ncheck completed {time.monotonic() - killed:.2f} s after the worker was killed")
    run = scenario.only_check_run()
    assert (run["conclusion"], run["external_id"]) == ("success", delivery)
    name, head = scenario.full_name, run["head_sha"]
    summary = scenario.fake.calls_summary()
    assert summary.count(f"POST /repos/{name}/check-runs 201") == 1
    assert f"GET /repos/{name}/commits/{head}/check-runs 200" in summary
    scenario.fake.wait_for(lambda: bot.job_status(f"github-{delivery}") == "finished")
    assert second.alive()
    scenario.assert_clean()


def test_a_redelivery_of_a_job_whose_worker_died_is_queued_again(
    scenario: GitHub, bot: Bot
) -> None:
    payload = _clean_pull(scenario, 8)
    held = scenario.fake.hold("PATCH", COMPLETE_RUN)
    first = bot.start_worker(scenario.fake.env(), scenario.data_dir)
    delivery = str(uuid.uuid4())
    assert bot.post("pull_request", payload, delivery) == 202
    assert held.reached.wait(60), first.log
    first.kill()
    job = f"github-{delivery}"
    # Still within the dead worker's lease: nothing says it is dead yet.
    assert bot.post("pull_request", payload, delivery) in (200, 202)
    scenario.fake.wait_for(lambda: not bot.redis.exists(f"ichor:running:{job}"), timeout=30)
    assert bot.job_status(job) == "started"
    assert bot.post("pull_request", payload, delivery) == 202  # requeued, not a duplicate
    held.drop()
    bot.start_worker(scenario.fake.env(), scenario.data_dir)
    scenario.fake.wait_for(lambda: bot.job_status(job) == "finished", timeout=60)
    run = scenario.only_check_run()
    assert (run["status"], run["conclusion"]) == ("completed", "success")
    scenario.assert_clean()


def test_a_worker_rides_out_a_redis_outage_and_records_the_result_when_redis_is_back(
    scenario: GitHub, bot: Bot, own_redis: RedisServer
) -> None:
    payload = _clean_pull(scenario, 9)
    held = scenario.fake.hold("PATCH", COMPLETE_RUN)
    worker = bot.start_worker(scenario.fake.env(), scenario.data_dir, {"ICHOR_REDIS_OUTAGE": "120"})
    delivery = str(uuid.uuid4())
    assert bot.post("pull_request", payload, delivery) == 202
    assert held.reached.wait(60), worker.log
    own_redis.stop()
    held.release()
    # The job ends on the forge while Redis is away; recording its result has to wait.
    scenario.fake.wait_for(lambda: _statuses(scenario) == ["completed"], timeout=30)
    time.sleep(2)  # the worker keeps trying to reach Redis meanwhile
    assert worker.alive(), worker.log
    own_redis.start()
    job = f"github-{delivery}"
    scenario.fake.wait_for(lambda: bot.job_status(job) == "finished", timeout=60)
    assert worker.alive(), worker.log
    assert len(scenario.check_runs()) == 1
    scenario.assert_clean()


def test_a_rerequested_check_whose_pull_request_cannot_be_read_ends_saying_why(
    scenario: GitHub, bot: Bot
) -> None:
    head = scenario.base()
    payload = json.loads(
        (ROOT / "fixtures/webhooks/github/check_suite__rerequested.json").read_text()
    )
    clone_url = scenario.fake.clone_url(scenario.full_name)
    # Ingress refuses URLs that name another repository than full_name.
    payload["repository"].update(
        full_name=scenario.full_name, clone_url=clone_url, html_url=clone_url.removesuffix(".git")
    )
    payload["installation"] = {"id": 42}
    suite = payload["check_suite"]
    suite["head_sha"] = head
    suite["pull_requests"][0]["number"] = 404  # not on the forge: a permanent 404
    suite["pull_requests"][0]["head"]["sha"] = head
    delivery = str(uuid.uuid4())
    assert bot.post("check_suite", payload, delivery) == 202
    scenario.work()
    run = scenario.only_check_run()
    assert (run["status"], run["conclusion"]) == ("completed", "failure")
    assert "could not be completed" in run["output"]["title"].lower()
    assert "404" in run["output"]["summary"] + run["output"]["title"]
    # A permanent error: the job ends, nothing is left to retry.
    assert bot.job_status(f"github-{delivery}") == "finished"
    name = scenario.full_name
    assert scenario.fake.calls_summary().count(f"GET /repos/{name}/pulls/404 404") == 1
    assert len(bot.redis.zrange(f"rq:scheduled:{bot.queue}", 0, -1)) == 0


def test_a_job_abandoned_with_no_retries_left_still_ends_its_check_saying_why(
    scenario: GitHub, bot: Bot
) -> None:
    payload = _clean_pull(scenario, 10)
    held = scenario.fake.hold("PATCH", COMPLETE_RUN)
    first = bot.start_worker(scenario.fake.env(), scenario.data_dir)
    delivery = str(uuid.uuid4())
    job = f"github-{delivery}"
    assert bot.post("pull_request", payload, delivery) == 202
    assert held.reached.wait(60), first.log
    first.kill()
    held.drop()
    bot.redis.hset(f"rq:job:{job}", "retries_left", 0)  # as if its workers had died before
    bot.start_worker(scenario.fake.env(), scenario.data_dir)
    scenario.fake.wait_for(lambda: _statuses(scenario) == ["completed"], timeout=60)
    run = scenario.only_check_run()
    assert (run["conclusion"], run["external_id"]) == ("failure", delivery)
    assert "stopped before it finished" in run["output"]["summary"]
    assert bot.job_status(job) == "failed"
    scenario.fake.wait_for(lambda: bot.job_status(f"{job}-abandoned") == "finished")
    scenario.assert_clean()
