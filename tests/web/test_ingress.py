"""Webhook ingress over real HTTP (uvicorn on loopback) into real Redis and RQ."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import httpx
from rq import Queue
from rq.job import Job, JobStatus

from bot.queueing.inprocess import InProcessDeliveryQueue
from bot.queueing.redis_queue import RedisDeliveryQueue
from tests.conftest import FIXTURES, ROOT
from tests.support.waiting import wait_until
from tests.web.conftest import OwnRedis, Running, Serve

VALID = {
    "github": "pull_request__opened.json",
    "gitlab": "merge_request__open-woodpecker.json",
    "gitea": "pull_request__opened.json",
    "forgejo": "pull_request__opened.json",
}


def rq_queue(running: Running) -> Queue:
    queue = running.queue
    assert isinstance(queue, RedisDeliveryQueue)
    return queue.queue


def test_each_forge_queued_once(serve: Serve) -> None:
    running = serve()
    for forge, fixture in VALID.items():
        delivery = str(uuid.uuid4())
        first = running.post(forge, fixture, delivery=delivery)
        assert first.status_code == 202, (forge, first.text)
        job_id = first.json()["job"]
        assert job_id == f"{'gitea' if forge == 'forgejo' else forge}-{delivery}"
        again = running.post(forge, fixture, delivery=delivery)
        assert (again.status_code, again.json()["status"]) == (200, "duplicate")
        job = Job.fetch(job_id, connection=rq_queue(running).connection)
        assert job.func_name == "workers.jobs.handle_delivery"
    assert rq_queue(running).count == len(VALID)


def test_bad_signatures_are_401_and_nothing_queued(serve: Serve) -> None:
    running = serve()
    wrong = running.post("github", VALID["github"], secret="not-the-secret")
    assert wrong.status_code == 401
    body = (ROOT / "fixtures/webhooks/github" / VALID["github"]).read_bytes()
    headers = {"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": str(uuid.uuid4())}
    missing = httpx.post(f"{running.url}/webhooks/github", content=body, headers=headers)
    assert missing.status_code == 401
    empty = httpx.post(
        f"{running.url}/webhooks/gitea",
        content=body,
        headers={
            "X-Gitea-Event": "pull_request",
            "X-Gitea-Delivery": "d1",
            "X-Gitea-Signature": "",
        },
    )
    assert empty.status_code == 401
    token = running.post("gitlab", VALID["gitlab"], secret="wrong")
    assert token.status_code == 401
    assert "secret" not in wrong.text.lower() or "gh-secret" not in wrong.text
    assert rq_queue(running).count == 0


def test_rotated_secrets(serve: Serve) -> None:
    running = serve(github_webhook_secret="old-one, new-one")
    assert running.post("github", VALID["github"], secret="old-one").status_code == 202
    assert running.post("github", VALID["github"], secret="new-one").status_code == 202
    assert running.post("github", VALID["github"], secret="gh-secret").status_code == 401


def test_forge_without_secret_refuses(serve: Serve) -> None:
    running = serve(gitea_webhook_secret=None)
    response = running.post("gitea", VALID["gitea"])
    assert response.status_code == 401
    assert "no secret" in response.json()["error"]


def test_redelivery_after_a_failed_job_runs_again(serve: Serve) -> None:
    running = serve()
    delivery = str(uuid.uuid4())
    job_id = running.post("github", VALID["github"], delivery=delivery).json()["job"]
    queue = rq_queue(running)
    job = Job.fetch(job_id, connection=queue.connection)
    # The job fails the way a worker records it: status failed, in the failed registry.
    queue.remove(job)
    job.set_status(JobStatus.FAILED)
    queue.failed_job_registry.add(job, ttl=600)
    again = running.post("github", VALID["github"], delivery=delivery)
    assert (again.status_code, again.json()["status"]) == (202, "requeued")
    assert queue.count == 1 and job_id in queue.job_ids
    third = running.post("github", VALID["github"], delivery=delivery)
    assert third.json()["status"] == "duplicate"


def test_limits_and_malformed_bodies(serve: Serve) -> None:
    running = serve(max_body_bytes=1024)
    big = running.post("github", VALID["github"])
    assert big.status_code == 413
    small = serve()
    bad_json = small.post("github", "x", event="pull_request", body=b"{not json")
    assert bad_json.status_code == 400
    unknown = small.post("github", "x", event="deployment_status", body=b"{}")
    assert unknown.status_code == 200 and unknown.json()["status"] == "ignored"
    ping = small.post("github", "ping__repository.json", event="ping")
    assert ping.status_code == 200
    assert rq_queue(small).count == 0


def test_redis_down_spools_then_drains_exactly_once(serve: Serve, own_redis: OwnRedis) -> None:
    running = serve(redis_url=own_redis.url)
    before = running.post("github", VALID["github"])
    assert before.status_code == 202
    own_redis.stop()
    deliveries = [str(uuid.uuid4()) for _ in range(5)]
    for delivery in deliveries:
        response = running.post("github", VALID["github"], delivery=delivery)
        assert (response.status_code, response.json()["status"]) == (202, "spooled")
    # A redelivery of a spooled one while Redis is down is spooled too; dedupe settles it.
    assert running.post("github", VALID["github"], delivery=deliveries[0]).status_code == 202
    spool_dir = running.settings.data_dir / "spool"
    assert len(list(spool_dir.glob("*.json"))) == 6
    own_redis.start()  # an empty Redis: only what the spool holds comes back
    wait_until(lambda: not list(spool_dir.glob("*.json")), "the spool drained")
    queue = rq_queue(running)
    assert sorted(queue.job_ids) == sorted(f"github-{d}" for d in deliveries)
    assert running.post("github", VALID["github"], delivery=deliveries[1]).json()["status"] == (
        "duplicate"
    )


def test_spool_full_is_503(serve: Serve, own_redis: OwnRedis) -> None:
    running = serve(redis_url=own_redis.url, spool_max_files=1)
    own_redis.stop()
    assert running.post("github", VALID["github"]).status_code == 202
    assert running.post("github", VALID["github"]).status_code == 503


def test_in_process_queue_runs_the_job(serve: Serve) -> None:
    # No GitLab token: the job runs, cannot post, and ends failed saying why (issue 20 item 6).
    running = serve(redis_url=None)
    job_id = running.post("gitlab", VALID["gitlab"]).json()["job"]
    queue = running.queue
    assert isinstance(queue, InProcessDeliveryQueue)
    assert queue.wait(job_id, timeout=120) == "failed"
    jobs = httpx.get(running.url + "/").text.split('<section id="jobs">', 1)[1]
    assert job_id in jobs and "not posted" in jobs and "the GitLab token is not set" in jobs


def test_worker_process_runs_queued_jobs(serve: Serve) -> None:
    running = serve()
    job_id = running.post("github", VALID["github"]).json()["job"]
    env = {**os.environ, "ICHOR_REDIS_URL": running.settings.redis_url or ""}
    env["ICHOR_QUEUE_NAME"] = running.settings.queue_name
    env.pop("ICHOR_GITHUB_APP_ID", None)
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "worker", "--burst"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    job = Job.fetch(job_id, connection=rq_queue(running).connection)
    # It ran, and without a GitHub App it could post nothing: failed, no retries, and why.
    assert job.get_status() == JobStatus.FAILED
    assert (job.retries_left or 0) == 0 and queue_is_empty(running)
    result = job.latest_result()
    assert result is not None and "the GitHub App id is not set" in (result.exc_string or "")
    assert b"failed: github delivery" in proc.stderr and b"Traceback" not in proc.stderr


def queue_is_empty(running: Running) -> bool:
    queue = rq_queue(running)
    return queue.count == 0 and queue.scheduled_job_registry.count == 0


def test_health_ready_metrics(serve: Serve, own_redis: OwnRedis) -> None:
    running = serve(redis_url=own_redis.url)
    assert httpx.get(running.url + "/healthz").status_code == 200
    assert httpx.get(running.url + "/readyz").status_code == 200
    running.post("github", VALID["github"])
    metrics = httpx.get(running.url + "/metrics").text
    assert (
        'ichor_webhook_deliveries_total{event="pull_request",forge="github",outcome="queued"} 1.0'
        in metrics
    )
    assert "ichor_queue_depth 1.0" in metrics
    own_redis.stop()
    assert httpx.get(running.url + "/readyz").status_code == 503


def test_a_repository_name_that_leaves_its_api_path_is_400_and_not_queued(serve: Serve) -> None:
    # ``octo/../gitops`` would turn /repos/{owner}/{repo}/check-runs into /gitops/check-runs,
    # called with the installation's token.
    running = serve()
    payload = json.loads((FIXTURES / "webhooks/github" / VALID["github"]).read_bytes())
    payload["repository"]["full_name"] = "octo/../gitops"
    response = running.post("github", "x", event="pull_request", body=json.dumps(payload).encode())
    assert response.status_code == 400
    assert "repository.full_name" in response.json()["error"]
    assert rq_queue(running).count == 0
