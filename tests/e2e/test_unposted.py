"""End to end, issue 20 item 6: a job that ends without posting its result is shown failed, with
the reason, on the status page and counted in ``/metrics``; ``/readyz`` and the worker's start-up
say which forges are half-configured. A job that did post (an error check run) is not counted.

Real ``ichor-bot serve`` and ``ichor-bot worker --burst`` on the shared Redis; the web process
has the webhook secrets only, the worker what each test gives it (as deployed).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.drivers import GitHub
from tests.e2e.harness import Bot, WorkerRun, pull_request_payload, running_bot
from tests.fakeforge import FakeGitHub
from tests.fakeforge.fixtures import fake_github  # noqa: F401 - the fixture
from tests.support.gitops import configmap

TOKENS = r"/app/installations/\d+/access_tokens"


@pytest.fixture
def bot(tmp_path: Path) -> Iterator[Bot]:
    (tmp_path / "bot").mkdir()
    with running_bot(tmp_path / "bot") as running:
        yield running


@pytest.fixture
def scenario(fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> GitHub:  # noqa: F811
    return GitHub(fake_github, bot, tmp_path)


def _job_row(bot: Bot, job_id: str) -> str:
    """The job's row in the status page's jobs table, tags removed."""
    page = httpx.get(bot.url + "/", timeout=10).text
    part = page.split('<section id="jobs">', 1)[1].split("</section>", 1)[0]
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", part, re.S):
        text = " ".join(re.sub(r"<[^>]+>", " ", row).split())
        if job_id in text:
            return text
    raise AssertionError(f"{job_id} is not in the jobs table: {part}")


def _unposted(bot: Bot, forge: str, reason: str) -> float:
    metrics = httpx.get(bot.url + "/metrics", timeout=10).text
    pattern = rf'^ichor_jobs_unposted_total\{{forge="{forge}",reason="{reason}"\}} (\S+)$'
    found = re.search(pattern, metrics, re.M)
    assert found is not None, metrics
    return float(found.group(1))


def _pull(scenario: GitHub, number: int) -> dict[str, object]:
    base = scenario.local.commit(
        {".ichor.yaml": "version: 1\ntargets:\n  - {name: prod, path: clusters/prod}\n"}, "base"
    )
    head = scenario.commit({"clusters/prod/v1/configmaps/web/a.yaml": configmap("a")})
    return scenario.pull_request(head, number=number, base=base, deliver=False)


def test_no_app_id_the_job_is_failed_with_why_counted_and_readyz_names_github(
    bot: Bot, tmp_path: Path
) -> None:
    payload = pull_request_payload(
        full_name="acme/no-app",
        clone_url="https://github.com/acme/no-app.git",
        number=3,
        head_sha="a" * 40,
        base_sha="b" * 40,
    )
    delivery = str(uuid.uuid4())
    job = f"github-{delivery}"
    assert bot.post("pull_request", payload, delivery) == 202
    run = bot.run_worker({}, tmp_path / "worker-data")  # the webhook secret, no App id or key
    assert run.code == 0, run.log
    assert "github is half-configured" in run.log and "ICHOR_GITHUB_APP_ID" in run.log
    assert bot.job_status(job) == "failed"
    row = _job_row(bot, job)
    assert " failed " in f" {row} " and "not posted" in row, row
    assert "the GitHub App id is not set" in row, row
    assert _unposted(bot, "github", "settings") == 1.0
    ready = httpx.get(bot.url + "/readyz", timeout=10)
    # A forge the workers cannot post to is a setting to fix, not a reason to stop taking
    # deliveries: the pod stays in rotation and the body says what is wrong.
    assert ready.status_code == 200
    assert "github is half-configured" in ready.text and "ICHOR_GITHUB_APP_ID" in ready.text
    page = httpx.get(bot.url + "/", timeout=10).text
    assert "github is half-configured" in page


def test_an_installation_that_cannot_be_resolved_is_failed_and_counted(
    scenario: GitHub,
) -> None:
    scenario.deliver(_pull(scenario, 4))
    job = scenario.bot.deliveries[-1]
    scenario.fake.inject("POST", TOKENS, status=404, times=None)
    run = scenario.work()
    assert scenario.check_runs() == []
    assert scenario.bot.job_status(job) == "failed", run.log
    row = _job_row(scenario.bot, job)
    assert "not posted" in row and "404" in row, row
    assert _unposted(scenario.bot, "github", "unresolved") == 1.0
    assert _unposted(scenario.bot, "github", "settings") == 0.0


def test_a_forge_that_cannot_be_reached_is_said_so_once_retries_are_spent(
    scenario: GitHub,
) -> None:
    scenario.deliver(_pull(scenario, 5))
    job = scenario.bot.deliveries[-1]
    scenario.bot.redis.hset(f"rq:job:{job}", "retries_left", 0)  # its last try
    scenario.fake.inject(status=503, headers={"retry-after": "0"}, times=None)
    run: WorkerRun = scenario.work()
    assert scenario.check_runs() == []
    assert scenario.bot.job_status(job) == "failed", run.log
    row = _job_row(scenario.bot, job)
    assert "could not be reached" in row and "503" in row, row
    assert _unposted(scenario.bot, "github", "unreachable") == 1.0


def test_a_job_that_posted_an_error_check_run_is_not_counted_as_unposted(
    scenario: GitHub,
) -> None:
    payload = _pull(scenario, 6)
    # A base the forge does not have: the fetch fails, and the check run on the head says so.
    payload["pull_request"]["base"]["sha"] = "c" * 40  # type: ignore[index]
    scenario.deliver(payload)
    job = scenario.bot.deliveries[-1]
    worker = scenario.work()
    assert len(scenario.check_runs()) == 1, worker.log
    run = scenario.only_check_run()
    assert run["conclusion"] == "failure" and "could not be completed" in run["output"]["summary"]
    assert scenario.bot.job_status(job) == "finished"
    row = _job_row(scenario.bot, job)
    assert "posted" in row and "not posted" not in row, row
    for reason in ("settings", "refused", "unresolved", "unreachable", "error"):
        assert _unposted(scenario.bot, "github", reason) == 0.0


def test_a_check_run_github_refuses_is_failed_with_its_answer(scenario: GitHub) -> None:
    payload = _pull(scenario, 7)
    missing = "c" * 40  # a head the forge does not have: it refuses a check run on it (422)
    payload["pull_request"]["head"]["sha"] = missing  # type: ignore[index]
    scenario.fake.update_pull(scenario.full_name, 7, head_sha=missing)
    scenario.deliver(payload)
    job = scenario.bot.deliveries[-1]
    worker = scenario.work()
    assert scenario.check_runs() == []
    assert scenario.bot.job_status(job) == "failed", worker.log
    row = _job_row(scenario.bot, job)
    assert "not posted" in row and "the forge refused the bot" in row and "422" in row, row
    assert _unposted(scenario.bot, "github", "refused") == 1.0
