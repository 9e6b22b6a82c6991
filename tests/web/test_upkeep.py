"""The status page and ``/metrics`` show the rate budget and what the sweeps found (design.md
7), read from where the workers keep them, over real HTTP."""

from __future__ import annotations

import re
import time

import httpx
import redis

from bot.state.rates import RateBudget, rate_store
from bot.state.sweeps import RedisSweeps, RepoReconciled, SweepRun
from tests.web.conftest import SHARED_REDIS, Serve


def _rows(html: str, section: str) -> list[str]:
    part = html.split(f'<section id="{section}">', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", part, re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", r).split()) for r in rows[1:]]


def test_the_rate_budget_and_the_sweeps_are_shown(serve: Serve) -> None:
    running = serve()
    settings = running.settings
    later = time.time() + 600
    rates = rate_store(settings.redis_url, settings.data_dir, settings.queue_name)
    rates.put(RateBudget("github", "installation 42", 10, 5000, later, 1.0))
    rates.put(RateBudget("gitlab", "", 1800, 2000, later, 2.0))
    sweeps = RedisSweeps(redis.Redis.from_url(SHARED_REDIS), settings.queue_name)
    sweeps.record_run(SweepRun(3.0, "github", 4, 3, 1, 2, 5, 2, {"processed": 3}))
    sweeps.record_run(SweepRun(3.0, "gitea", problem="Gitea GET /user/repos: 401"))
    sweeps.record_repo(RepoReconciled(4.0, "github", "octo/gitops", 2, 1, 0, 1, unchanged=True))
    sweeps.record_repo(RepoReconciled(5.0, "github", "octo/busy", note="left for later"))
    sweeps.count("github", "queued", 3)
    sweeps.count("github", "redelivered", 2)
    try:
        page = httpx.get(running.url + "/", timeout=30).text
        metrics = httpx.get(running.url + "/metrics", timeout=30).text
    finally:
        rates.close()
        sweeps.close()
    budget = _rows(page, "upkeep")
    assert budget[0].startswith("github installation 42 10 low 5000")
    assert budget[1].startswith("gitlab token 1800 2000")
    runs = _rows(page, "sweeps")
    assert runs[0].startswith("gitea") and "Gitea GET /user/repos: 401" in runs[0]
    assert "github" in runs[1] and " 4 3 1 2 5 2 3 processed" in runs[1]
    # The repositories' table (its head row is a row of the section too), newest first.
    assert "octo/busy" in runs[3] and "left for later" in runs[3]
    assert "octo/gitops 2 1 0 1 0 unchanged since the last look (304)" in runs[4]
    assert 'ichor_rate_limit_remaining{bucket="installation 42",forge="github"} 10.0' in metrics
    assert 'ichor_rate_limit{bucket="token",forge="gitlab"} 2000.0' in metrics
    assert 'ichor_reconcile_checks_queued_total{forge="github"} 3.0' in metrics
    assert 'ichor_reconcile_checks_queued_total{forge="gitea"} 0.0' in metrics
    assert 'ichor_redeliveries_total{result="asked"} 2.0' in metrics
    assert 'ichor_sweep_last_run_timestamp_seconds{forge="gitea"} 3.0' in metrics


def test_without_redis_the_page_says_no_sweep_runs(serve: Serve) -> None:
    running = serve(redis_url=None, reconcile_interval=0)
    settings = running.settings
    rates = rate_store(None, settings.data_dir, settings.queue_name)
    rates.put(RateBudget("gitea", "", 0, None, None, 1.0))  # spent, of a limit not said
    page = httpx.get(running.url + "/", timeout=30).text
    assert _rows(page, "upkeep")[0].startswith("gitea token 0 low ?")
    assert "The sweep is off" in page and "No sweep yet" in page
