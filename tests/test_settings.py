"""Settings come from the environment when loaded (at start-up), never at import."""

from __future__ import annotations

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
