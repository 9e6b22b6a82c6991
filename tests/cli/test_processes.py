"""The worker and web processes: clear one-line errors, never a Redis password in them, and
what they say at start-up about half-configured forges (issue 20 item 6)."""

from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.cli.processes import redis_location, say_forges_posted, say_forges_served
from bot.settings import Settings, forge_setups
from bot.state.outcomes import RedisOutcomes
from tests.support.redis_url import SHARED_REDIS_URL
from tests.web.conftest import free_port


def test_unreachable_redis_is_one_line_without_the_password(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ICHOR_REDIS_URL", f"redis://:s3cret@127.0.0.1:{free_port()}/0")
    assert main(["worker", "--burst"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ichor-bot: error: cannot reach Redis at 127.0.0.1:")
    assert "s3cret" not in err and len(err.strip().splitlines()) == 1


def test_worker_needs_redis(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ICHOR_REDIS_URL", raising=False)
    assert main(["worker", "--burst"]) == 2
    assert "ICHOR_REDIS_URL is not set" in capsys.readouterr().err


def test_redis_location() -> None:
    assert redis_location("redis://user:pw@cache.internal:6380/2") == "cache.internal:6380/2"
    assert redis_location("redis://localhost") == "localhost:6379"


def _clear_ichor_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("ICHOR_") and name != "ICHOR_TEST_REDIS_DB":
            monkeypatch.delenv(name)


def test_the_worker_says_at_start_up_which_forges_it_can_post_to_and_tells_the_web(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    _clear_ichor_env(monkeypatch)
    queue = f"test-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("ICHOR_REDIS_URL", SHARED_REDIS_URL)
    monkeypatch.setenv("ICHOR_QUEUE_NAME", queue)
    monkeypatch.setenv("ICHOR_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ICHOR_GITHUB_WEBHOOK_SECRET", "s")
    monkeypatch.setenv("ICHOR_GITLAB_TOKEN", "t")
    store = RedisOutcomes(SHARED_REDIS_URL, queue)
    try:
        with caplog.at_level(logging.INFO, logger="ichor.forges"):
            assert main(["worker", "--burst"]) == 0
        said = [r.getMessage() for r in caplog.records if r.name == "ichor.forges"]
        assert said == [
            "this worker can post results to: gitlab",
            "github is half-configured: ICHOR_GITHUB_WEBHOOK_SECRET is set, ICHOR_GITHUB_APP_ID "
            "and ICHOR_GITHUB_PRIVATE_KEY are not: its deliveries are accepted but no result can "
            "be posted",
        ]
        reported = store.setups()
        assert reported is not None
        assert [(s.forge, s.posts) for s in reported] == [
            ("github", False),
            ("gitlab", True),
            ("gitea", False),
        ]
    finally:
        store.redis.delete(store.forges_key)
        keys = list(store.redis.scan_iter(f"rq:*{queue}*"))
        if keys:
            store.redis.delete(*keys)
        store.redis.srem("rq:queues", f"rq:queue:{queue}")
        store.close()


def test_serve_in_process_says_which_forges_are_half_configured(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    settings = Settings(
        data_dir=tmp_path, gitea_webhook_secret="s", gitea_url="https://g.test", github_app_id="1"
    )
    with caplog.at_level(logging.INFO, logger="ichor.forges"):
        say_forges_served(settings)
    assert [(r.levelname, r.getMessage().split(":")[0]) for r in caplog.records] == [
        ("WARNING", "github is half-configured"),
        ("WARNING", "gitea is half-configured"),
    ]
    assert "its deliveries are refused (401) and no result can be posted" in caplog.text


def test_serve_on_redis_says_what_the_workers_reported(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    queue = f"test-{uuid.uuid4().hex[:12]}"
    settings = Settings(
        redis_url=SHARED_REDIS_URL, queue_name=queue, data_dir=tmp_path, gitlab_webhook_secret="s"
    )
    store = RedisOutcomes(SHARED_REDIS_URL, queue)
    try:
        with caplog.at_level(logging.INFO, logger="ichor.forges"):
            say_forges_served(settings)  # no worker has started yet: said, not warned
            store.report_setups(forge_setups(Settings(github_app_id="1", github_private_key="k")))
            say_forges_served(settings)
        assert [(r.levelname, r.getMessage().split(":")[0]) for r in caplog.records] == [
            (
                "INFO",
                "no worker has said yet which forges it can post to (each says so at start-up)",
            ),
            ("WARNING", "github is half-configured"),
            ("WARNING", "gitlab is half-configured"),
        ]
    finally:
        store.redis.delete(store.forges_key)
        store.close()


def test_serve_starts_when_redis_cannot_say(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    down = f"redis://127.0.0.1:{free_port()}/0"
    with caplog.at_level(logging.INFO, logger="ichor.forges"):
        say_forges_served(Settings(redis_url=down, data_dir=tmp_path))
    assert (
        caplog.records[0]
        .getMessage()
        .startswith("cannot read which forges the workers can post to: ConnectionError")
    )


def test_a_worker_that_cannot_tell_the_web_goes_on(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    class Unreachable:
        def report_setups(self, setups: object) -> None:
            raise OSError("no route")

    with caplog.at_level(logging.INFO, logger="ichor.forges"):
        say_forges_posted(Settings(data_dir=tmp_path), Unreachable())  # type: ignore[arg-type]
    assert caplog.records[-1].getMessage() == (
        "could not tell the web process which forges this worker can post to: no route"
    )
