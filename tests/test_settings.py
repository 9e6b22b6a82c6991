"""Settings come from the environment when loaded (at start-up), never at import."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from bot.settings import (
    ForgeSetup,
    Settings,
    forge_setups,
    half_configured,
    joined_setups,
    load_settings,
    split_secrets,
)


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


def _half(values: Mapping[str, object] | None = None, *, receiving: bool = True) -> list[str]:
    settings = Settings(**(values or {}))  # type: ignore[arg-type]
    return half_configured(forge_setups(settings), receiving=receiving)


def test_a_forge_set_up_whole_or_not_at_all_is_not_half_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in list(os.environ):
        if name.startswith("ICHOR_"):
            monkeypatch.delenv(name)
    assert _half() == []
    whole: dict[str, object] = {
        "github_webhook_secret": "s",
        "github_app_id": "1",
        "github_private_key": "pem",
        "gitlab_webhook_secret": "s",
        "gitlab_token": "t",
        "gitea_webhook_secret": "s",
        "gitea_url": "https://gitea.test",
        "gitea_token": "t",
    }
    assert _half(whole) == []
    assert [s.posts for s in forge_setups(Settings(**whole))] == [True, True, True]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("values", "line"),
    [
        (
            {"github_webhook_secret": "s"},
            "github is half-configured: ICHOR_GITHUB_WEBHOOK_SECRET is set, ICHOR_GITHUB_APP_ID "
            "and ICHOR_GITHUB_PRIVATE_KEY are not: its deliveries are accepted but no result "
            "can be posted",
        ),
        (
            {"github_webhook_secret": "s", "github_app_id": "1"},
            "github is half-configured: ICHOR_GITHUB_WEBHOOK_SECRET and ICHOR_GITHUB_APP_ID are "
            "set, ICHOR_GITHUB_PRIVATE_KEY is not: its deliveries are accepted but no result "
            "can be posted",
        ),
        (
            {"github_app_id": "1", "github_private_key": "pem"},
            "github is half-configured: ICHOR_GITHUB_APP_ID and ICHOR_GITHUB_PRIVATE_KEY are "
            "set, ICHOR_GITHUB_WEBHOOK_SECRET is not: its deliveries are refused (401)",
        ),
        (
            {"github_private_key": "pem"},
            "github is half-configured: ICHOR_GITHUB_PRIVATE_KEY is set, ICHOR_GITHUB_APP_ID and "
            "ICHOR_GITHUB_WEBHOOK_SECRET are not: its deliveries are refused (401) and no result "
            "can be posted",
        ),
        (
            {"gitlab_webhook_secret": "s"},
            "gitlab is half-configured: ICHOR_GITLAB_WEBHOOK_SECRET (or "
            "ICHOR_GITLAB_SIGNING_SECRET) is set, ICHOR_GITLAB_TOKEN is not: its deliveries are "
            "accepted but no result can be posted",
        ),
        (
            {"gitlab_token": "t"},
            "gitlab is half-configured: ICHOR_GITLAB_TOKEN is set, ICHOR_GITLAB_WEBHOOK_SECRET "
            "(or ICHOR_GITLAB_SIGNING_SECRET) is not: its deliveries are refused (401)",
        ),
        (
            {"gitea_webhook_secret": "s", "gitea_token": "t"},
            "gitea is half-configured: ICHOR_GITEA_WEBHOOK_SECRET and ICHOR_GITEA_TOKEN are set, "
            "ICHOR_GITEA_URL is not: its deliveries are accepted but no result can be posted",
        ),
        (
            {"gitea_webhook_secret": "s", "gitea_url": "https://gitea.test"},
            "gitea is half-configured: ICHOR_GITEA_WEBHOOK_SECRET and ICHOR_GITEA_URL are set, "
            "ICHOR_GITEA_TOKEN is not: its deliveries are accepted but no result can be posted",
        ),
        (
            {"github_webhook_secret": "s", "local_repos": "/repos"},
            "github is half-configured: ICHOR_GITHUB_WEBHOOK_SECRET is set, ICHOR_GITHUB_APP_ID "
            "and ICHOR_GITHUB_PRIVATE_KEY are not: its deliveries are accepted but no result "
            "can be posted (repositories under ICHOR_LOCAL_REPOS are still checked)",
        ),
    ],
)
def test_which_forges_are_half_configured(
    monkeypatch: pytest.MonkeyPatch, values: dict[str, object], line: str
) -> None:
    for name in list(os.environ):
        if name.startswith("ICHOR_"):
            monkeypatch.delenv(name)
    assert _half(values) == [line]


def test_a_gitlab_signing_secret_alone_takes_deliveries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ICHOR_GITLAB_WEBHOOK_SECRET", raising=False)
    setup = forge_setups(Settings(gitlab_signing_secret="whsec_x", gitlab_token="t"))[1]
    assert (setup.forge, setup.receives, setup.posts) == ("gitlab", True, True)


def test_a_worker_says_nothing_of_secrets_it_does_not_need(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The web process holds the secrets; a worker with only the credentials is set up right,
    # and one with a part of them is not.
    for name in list(os.environ):
        if name.startswith("ICHOR_"):
            monkeypatch.delenv(name)
    credentials = {"github_app_id": "1", "github_private_key": "pem", "gitea_token": "t"}
    assert _half(credentials, receiving=False) == [
        "gitea is half-configured: ICHOR_GITEA_TOKEN is set, ICHOR_GITEA_URL is not: no result "
        "can be posted"
    ]


def test_the_web_process_joins_its_secrets_with_what_a_worker_can_post_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in list(os.environ):
        if name.startswith("ICHOR_"):
            monkeypatch.delenv(name)
    web = forge_setups(Settings(github_webhook_secret="s", gitlab_webhook_secret="s"))
    worker = forge_setups(Settings(github_app_id="1", github_private_key="pem", gitea_token="t"))
    reported = [ForgeSetup.from_dict(json.loads(json.dumps(s.to_dict()))) for s in worker]
    assert reported == list(worker)
    joined = joined_setups(web, reported)
    assert [(s.forge, s.receives, s.posts) for s in joined] == [
        ("github", True, True),
        ("gitlab", True, False),
        ("gitea", False, False),
    ]
    assert [line.split(":")[0] for line in half_configured(joined)] == [
        "gitlab is half-configured",
        "gitea is half-configured",
    ]


def test_the_redis_password_goes_into_the_url_encoded() -> None:
    settings = Settings(redis_url="redis://ichor-redis:6379/0", redis_password="p@ss w/rd")
    assert settings.redis_url == "redis://:p%40ss%20w%2Frd@ichor-redis:6379/0"
    assert "p@ss" not in repr(settings) and "p%40ss" not in repr(settings)
    named = Settings(redis_url="rediss://bot@redis.example:6380/1", redis_password="x")
    assert named.redis_url == "rediss://bot:x@redis.example:6380/1"


def test_a_url_with_a_password_and_a_password_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="keep one") as caught:
        Settings(redis_url="redis://:inline@h:6379/0", redis_password="other")
    assert "inline" not in str(caught.value) and "other" not in str(caught.value)
