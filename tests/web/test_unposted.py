"""What the web process says of jobs that ended without posting, and of half-configured forges:
the status page, ``/metrics`` and ``/readyz`` (issue 20 item 6)."""

from __future__ import annotations

import re

import httpx

from bot.settings import Settings, forge_setups
from bot.state.outcomes import FileOutcomes, JobOutcome, RedisOutcomes
from bot.web.metrics import Metrics
from bot.web.repo_view import FORGES, Filters
from bot.web.ui import Snapshot, _environment, unposted_lines
from tests.web.conftest import OwnRedis, Serve


def _outcome(job: str, result: str, detail: str = "", kind: str = "", **kw: object) -> JobOutcome:
    values: dict[str, object] = {"at": 1.0, "job_id": job, "forge": "github", "result": result}
    values.update(detail=detail, kind=kind, **kw)
    return JobOutcome(**values)  # type: ignore[arg-type]


def test_readyz_lists_half_configured_forges_and_stays_ready_in_process(serve: Serve) -> None:
    # The fixture sets the three webhook secrets and no forge credentials.
    running = serve(redis_url=None, gitlab_token="t")
    ready = httpx.get(running.url + "/readyz")
    assert ready.status_code == 200
    lines = ready.text.splitlines()
    assert lines[0] == "ready"
    assert [line.split(":")[0] for line in lines[1:]] == [
        "github is half-configured",
        "gitea is half-configured",
    ]
    assert "ICHOR_GITHUB_APP_ID and ICHOR_GITHUB_PRIVATE_KEY are not" in lines[1]


def test_readyz_on_redis_reads_what_the_workers_can_post_to(
    serve: Serve, own_redis: OwnRedis
) -> None:
    running = serve(redis_url=own_redis.url)
    assert httpx.get(running.url + "/readyz").text == (
        "ready\nno worker has said yet which forges it can post to (each says so at start-up)\n"
    )
    worker = Settings(github_app_id="1", github_private_key="pem", gitea_url="https://g.test")
    store = RedisOutcomes(own_redis.url, running.settings.queue_name)
    store.report_setups(forge_setups(worker))
    ready = httpx.get(running.url + "/readyz")
    assert ready.status_code == 200
    # GitHub is whole (secret here, App there); GitLab and Gitea cannot post.
    assert [line.split(":")[0] for line in ready.text.splitlines()] == [
        "ready",
        "gitlab is half-configured",
        "gitea is half-configured",
    ]
    assert "ICHOR_GITEA_TOKEN is not" in ready.text
    own_redis.stop()
    down = httpx.get(running.url + "/readyz")
    assert (down.status_code, down.text) == (503, "redis unreachable\n")


def test_metrics_count_unposted_jobs_by_forge_and_reason(serve: Serve) -> None:
    running = serve(redis_url=None)
    files = FileOutcomes(running.settings.data_dir / "history")
    files.add(_outcome("github-1", "not-posted", "no App id", "settings"))
    files.add(_outcome("gitea-2", "not-posted", "503", "unreachable", forge="gitea"))
    files.add(_outcome("gitea-3", "not-posted", "503", "unreachable", forge="gitea", final=False))
    files.add(_outcome("github-4", "posted", "error: could not complete"))
    text = httpx.get(running.url + "/metrics").text
    found = dict(
        re.findall(
            r'^ichor_jobs_unposted_total\{(forge="[^"]+",reason="[^"]+")\} (\S+)$', text, re.M
        )
    )
    assert len(found) == 4 * 5  # every forge and reason: bounded, zeros included
    assert found['forge="github",reason="settings"'] == "1.0"
    assert found['forge="gitea",reason="unreachable"'] == "1.0"
    assert sum(float(v) for v in found.values()) == 2.0


def test_an_unreadable_count_is_left_out_not_reset() -> None:
    metrics = Metrics()
    assert b"ichor_jobs_unposted_total" not in metrics.render(0, {}, None)
    shown = metrics.render(0, {}, {("github", "settings"): 3}).decode()
    assert 'ichor_jobs_unposted_total{forge="github",reason="settings"} 3.0' in shown


def _jobs_rows(found: Snapshot) -> list[str]:
    html = (
        _environment()
        .get_template("index.html")
        .render(
            queue_kind="redis",
            found=found,
            states={},
            checks=[],
            commands=[],
            commands_shown=20,
            reserve="20%",
            interval=300.0,
            checks_matched=0,
            deliveries=[],
            filters=Filters(),
            forges=FORGES,
            conclusions=(),
            repositories=[],
            change_pulls=[],
            refresh=0,
            can_refresh=False,
            refresh_toggle="/",
        )
    )
    part = html.split('<section id="jobs">', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r"<tr([^>]*)>(.*?)</tr>", part, re.S)
    return [
        f"{attrs.strip()}|" + " ".join(re.sub(r"<[^>]+>", " ", r).split()) for attrs, r in rows[1:]
    ]


def test_each_job_row_says_how_it_ended() -> None:
    outcomes = {
        "github-1": _outcome("github-1", "not-posted", "the GitHub App id is not set", "settings"),
        "github-2": _outcome("github-2", "not-posted", "GitHub: 503", "unreachable", final=False),
        "github-3": _outcome("github-3", "posted", "error: Ichor Bot could not complete the check"),
        "github-4": _outcome("github-4", "silent", "superseded"),
        "github-5": _outcome("github-5", "done"),
    }
    jobs = [
        (j, s)
        for j, s in zip(
            outcomes, ["failed", "scheduled", "finished", "finished", "finished"], strict=True
        )
    ]
    rows = _jobs_rows(Snapshot(jobs=[*jobs, ("github-6", "queued")], outcomes=outcomes))
    assert rows == [
        'class="unposted"|github-1 failed not posted the bot&#39;s settings for this forge are '
        "incomplete: the GitHub App id is not set",
        'class="unposted"|github-2 scheduled not posted the forge could not be reached: '
        "GitHub: 503 (it will be tried again)",
        "|github-3 finished posted error: Ichor Bot could not complete the check",
        "|github-4 finished nothing to post (superseded)",
        "|github-5 finished done",
        "|github-6 queued",
    ]


def test_the_top_of_the_page_sums_up_recent_unposted_jobs_per_forge_and_reason() -> None:
    recent = [
        _outcome("github-3", "not-posted", "GitHub: 503 again", "unreachable"),
        _outcome("github-2", "not-posted", "GitHub: 503", "unreachable"),
        _outcome("github-9", "not-posted", "GitHub: 502", "unreachable", final=False),
        _outcome("gitea-1", "not-posted", "the Gitea token is not set", "settings", forge="gitea"),
        _outcome("github-1", "posted", "success: ok"),
    ]
    assert unposted_lines(recent) == [
        "github: 2 recent jobs ended without posting their result: the forge could not be "
        "reached (latest: GitHub: 503 again)",
        "gitea: 1 recent job ended without posting its result: the bot's settings for this "
        "forge are incomplete (latest: the Gitea token is not set)",
    ]


def test_the_page_names_half_configured_forges_and_unposted_jobs(serve: Serve) -> None:
    running = serve(redis_url=None)
    FileOutcomes(running.settings.data_dir / "history").add(
        _outcome("github-1", "not-posted", "the GitHub App id is not set", "settings")
    )
    page = httpx.get(running.url + "/").text
    problems = re.findall(r'<p class="problem[^"]*">(.*?)</p>', page, re.S)
    assert [p.split(":")[0] for p in problems] == [
        "github is half-configured",
        "gitlab is half-configured",
        "gitea is half-configured",
        "github",
    ]
    assert "1 recent job ended without posting its result" in problems[-1]
