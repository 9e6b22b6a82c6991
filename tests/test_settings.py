"""Settings come from the environment when loaded (at start-up), never at import."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.settings import Settings, load_settings, split_secrets


def test_read_when_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICHOR_REDIS_URL", "redis://127.0.0.1:6379/3")
    monkeypatch.setenv("ICHOR_GITHUB_WEBHOOK_SECRET", " old , new ,")
    monkeypatch.setenv("ICHOR_DATA_DIR", "/tmp/ichor-x")
    settings = load_settings()
    assert settings.redis_url == "redis://127.0.0.1:6379/3"
    assert settings.webhook_secrets("github") == ("old", "new")
    assert settings.webhook_secrets("gitea") == ()
    assert settings.data_dir == Path("/tmp/ichor-x")
    assert "old" not in repr(settings)  # secrets never reach a log line through repr


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ICHOR_REDIS_URL", "ICHOR_GITHUB_WEBHOOK_SECRET", "ICHOR_MAX_BODY_BYTES"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings()
    assert settings.redis_url is None
    assert settings.max_body_bytes == 25 << 20
    assert settings.webhook_secrets("github") == ()


def test_split_secrets() -> None:
    assert split_secrets(None) == ()
    assert split_secrets("a,,b , c") == ("a", "b", "c")


def test_web_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("ICHOR_"):
            monkeypatch.delenv(name)
    settings = Settings()
    assert settings.max_header_bytes == 64 << 10
    assert settings.body_budget_bytes == 64 << 20
    assert (settings.header_timeout_seconds, settings.body_timeout_seconds) == (10.0, 60.0)
    assert settings.max_connections == 500
    assert settings.redis_timeout_seconds == 0.5
    assert settings.status_auth is None
    monkeypatch.setenv("ICHOR_STATUS_AUTH", "ops:s3cret")
    monkeypatch.setenv("ICHOR_MAX_CONNECTIONS", "50")
    loaded = load_settings()
    assert loaded.max_connections == 50 and loaded.status_auth == "ops:s3cret"
    assert "s3cret" not in repr(loaded)


def test_api_tokens_are_parsed_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICHOR_API_TOKENS", " ui=0123456789abcdef-ui , cli=0123456789abcdef-cli,")
    settings = load_settings()
    assert settings.api_tokens == (("ui", "0123456789abcdef-ui"), ("cli", "0123456789abcdef-cli"))
    assert "0123456789abcdef" not in repr(settings)
    assert Settings(api_tokens="").api_tokens == ()  # type: ignore[arg-type]
    assert settings.api_wait_seconds == 60.0


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("ui", "pair 1 is not name=token"),
        ("ui=0123456789abcdef,=0123456789abcdef", "pair 2 is not name=token"),
        ("u i=0123456789abcdef", "pair 1"),
        ("ui=tiny", "shorter than 16"),
        ("ui=0123456789 abcdef", "holds a space"),
        ("ui=0123456789abcdef,ui=0123456789abcdeg", "named twice"),
    ],
)
def test_bad_api_tokens_stop_the_start_up_without_showing_a_token(raw: str, why: str) -> None:
    with pytest.raises(ValueError, match=why) as caught:
        Settings(api_tokens=raw)  # type: ignore[arg-type]  # the environment's string
    assert "0123456789" not in str(caught.value)  # the error names the pair, never the token
