"""The status page over real HTTP: every delivery outcome listed, refused ones with why, the
security headers, and history that survives a restart (Redis and data dir alike)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import httpx
import pytest

from bot.queueing.inprocess import InProcessDeliveryQueue
from bot.state.history import CheckEntry, FileHistory, RedisHistory
from bot.web.ui import SECURITY_HEADERS, commit_url, pull_url
from tests.support.gitrepo import WorkRepo
from tests.support.waiting import wait_until
from tests.web.conftest import OwnRedis, Running, Serve

VALID = {"github": "pull_request__synchronize.json"}
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)


def _page(running: Running, path: str = "/") -> httpx.Response:
    return httpx.get(running.url + path, timeout=30)


def _rows(html: str, section: str) -> list[str]:
    """The text of each table row in one section of the page, tags removed."""
    part = html.split(f'<section id="{section}">', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", part, re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", r).split()) for r in rows[1:]]


def local_hello(tmp_path: Path) -> Path:
    """Repositories for the local forge, with an empty one named as the fixtures' repository:
    its job posts there (that the commit is missing) and ends finished."""
    root = tmp_path / "repos"
    WorkRepo(root / "Codertocat" / "Hello-World")
    return root


def _post_refusals(running: Running) -> None:
    assert running.post("github", VALID["github"], secret="wrong").status_code == 401
    body = b"{" + b" " * (running.settings.max_body_bytes + 1) + b"}"
    assert running.post("gitea", "x", body=body, event="push").status_code == 413
    assert running.post("github", "x", body=b"{not json", event="push").status_code == 400
    assert running.post("github", "ping__repository.json", event="ping").status_code == 200


@pytest.mark.parametrize("redis_url", ["shared", None], ids=["redis", "in-process"])
def test_every_outcome_is_listed_with_why(
    serve: Serve, redis_url: str | None, tmp_path: Path
) -> None:
    # In process the job runs at once: on the local forge it ends finished (a failed job's
    # redelivery would run again, not be a duplicate).
    running = serve() if redis_url else serve(redis_url=None, local_repos=local_hello(tmp_path))
    assert running.post("github", VALID["github"], delivery="ok-1").status_code == 202
    assert running.post("github", VALID["github"], delivery="ok-1").status_code == 200
    _post_refusals(running)
    # Rows are written in batches after the answer: the ping, posted last, ends the wait.
    wait_until(
        lambda: re.search(
            r"ping .*200 ignored", "\n".join(_rows(_page(running).text, "deliveries"))
        ),
        "the ping's row listed",
    )
    rows = _rows(_page(running).text, "deliveries")
    joined = "\n".join(rows)
    assert "401 unauthorized X-Hub-Signature-256: signature does not match" in joined
    assert "413 too-large body over the size limit" in joined
    assert "400 bad-request body is not JSON" in joined
    assert re.search(r"ping .*200 ignored", joined)
    assert "200 duplicate" in joined
    assert re.search(r"Codertocat/Hello-World ok-1 202 queued github-ok-1", joined)
    assert rows[0].split()[2:4] == ["github", "ping"]  # newest first


def test_headers_stylesheet_and_missing_check(serve: Serve) -> None:
    running = serve(redis_url=None)
    page = _page(running)
    assert page.headers["content-security-policy"] == CSP
    assert page.headers["x-content-type-options"] == "nosniff"
    assert SECURITY_HEADERS["Content-Security-Policy"] == CSP
    assert '<link rel="stylesheet" href="/static/status.css">' in page.text
    assert "style=" not in page.text and "<script" not in page.text
    css = _page(running, "/static/status.css")
    assert css.headers["content-type"].startswith("text/css") and b"table" in css.content
    assert css.headers["x-content-type-options"] == "nosniff"
    for path in ("/checks/" + "0" * 24, "/checks/not-an-id"):
        missing = _page(running, path)
        assert missing.status_code == 404 and missing.headers["content-security-policy"] == CSP
    assert _page(running, "/checks/..%2F..%2Fetc%2Fpasswd").status_code == 404
    assert 'id="commands"' in page.text and 'id="change-prs"' in page.text


def _wait_ended(running: Running, job_id: str) -> None:
    assert isinstance(running.queue, InProcessDeliveryQueue)
    # Awaited, not polled against a short deadline (that failed on a loaded machine); the
    # bound only keeps a hung job from hanging the suite. Without a GitHub App the job ends
    # failed (it cannot post); either way it has ended.
    assert running.queue.wait(job_id, timeout=120) in ("finished", "failed")


def test_history_survives_a_restart_in_process(serve: Serve, tmp_path: Path) -> None:
    data_dir = tmp_path / "kept"
    first = serve(redis_url=None, data_dir=data_dir)
    job = first.post("github", VALID["github"], delivery="before-restart").json()["job"]
    assert first.post("github", VALID["github"], secret="wrong").status_code == 401
    _wait_ended(first, job)
    # The fixture's repository is on no forge this test can reach: its check is seeded the
    # way the worker writes it.
    FileHistory(data_dir / "history").add_check(_entry())
    assert "before-restart" in _page(first).text
    second = serve(redis_url=None, data_dir=data_dir)
    page = _page(second).text
    assert "before-restart" in "\n".join(_rows(page, "deliveries"))
    assert any("401 unauthorized" in r for r in _rows(page, "deliveries"))
    assert any("o/r" in r and "failure" in r for r in _rows(page, "checks"))


def test_history_survives_a_restart_on_redis(serve: Serve) -> None:
    first = serve()
    assert first.post("github", VALID["github"], delivery="kept-1").status_code == 202
    RedisHistory(first.settings.redis_url or "", first.settings.queue_name).add_check(_entry())
    assert "kept-1" in _page(first).text
    second = serve(queue_name=first.settings.queue_name)
    page = _page(second).text
    assert "kept-1" in "\n".join(_rows(page, "deliveries"))
    check = next(r for r in _rows(page, "checks") if "o/r" in r)
    assert "#12" in check and "failure 1 target refused" in check
    detail = _page(second, f"/checks/{_entry().id}")
    assert detail.status_code == 200 and "clusters/prod/x.txt" in detail.text
    assert 'href="https://github.example/o/r/pull/12"' in detail.text


def _entry() -> CheckEntry:
    from bot.state.history import IssueLine

    return CheckEntry(
        1_700_000_000.0,
        "github",
        "o/r",
        12,
        "ab" * 20,
        "failure",
        "1 target refused",
        "| prod | refused |",
        (IssueLine("clusters/prod/x.txt", 1, "failure", "foreign-file", "not YAML"),),
        1,
        "seeded",
        "https://github.example/o/r",
    )


def test_links_per_forge_and_never_from_other_schemes() -> None:
    entry = _entry()
    assert pull_url(entry) == "https://github.example/o/r/pull/12"
    assert commit_url(entry) == "https://github.example/o/r/commit/" + "ab" * 20
    gitlab = dataclasses.replace(entry, forge="gitlab")
    assert pull_url(gitlab) == "https://github.example/o/r/-/merge_requests/12"
    gitea = dataclasses.replace(entry, forge="gitea")
    assert commit_url(gitea) == "https://github.example/o/r/commit/" + "ab" * 20
    for bad in ("javascript:alert(1)", "data:text/html,x", "//evil.example/x", None):
        hostile = dataclasses.replace(entry, web_url=bad)
        assert pull_url(hostile) is None and commit_url(hostile) is None
    quoted = dataclasses.replace(entry, web_url='https://h.example/"><x')
    assert '"' not in (pull_url(quoted) or "") and "<" not in (pull_url(quoted) or "")
    odd_sha = dataclasses.replace(entry, head_sha="HEAD/../x")
    assert commit_url(odd_sha) is None


def test_page_and_deliveries_go_on_when_redis_is_down(serve: Serve, own_redis: OwnRedis) -> None:
    running = serve(redis_url=own_redis.url)
    own_redis.stop()
    # The answer never waits on the history: the delivery is spooled, its note dropped.
    assert running.post("github", VALID["github"]).status_code == 202
    page = _page(running)
    assert page.status_code == 200
    assert "history unavailable: ConnectionError" in page.text
    assert "No check posted yet." in page.text
