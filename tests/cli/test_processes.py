"""The worker process: clear one-line errors, and never a Redis password in them."""

from __future__ import annotations

import pytest

from bot.cli.main import main
from bot.cli.processes import redis_location
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
