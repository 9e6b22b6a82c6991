"""Settings from the environment (prefix ``ICHOR_``), read once at start-up, never at import."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

DEFAULT_MAX_BODY_BYTES = 25 << 20
DEFAULT_BODY_BUDGET_BYTES = 64 << 20
DEFAULT_MAX_HEADER_BYTES = 64 << 10
# A change API client's name: it is the actor of every audit record its requests leave.
_API_CLIENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MIN_API_TOKEN_CHARS = 16  # a guessable token would hand out write access to repositories


class Settings(BaseSettings):
    # hide_input_in_errors: a bad value may be a secret (a token); the error names the field.
    model_config = SettingsConfigDict(
        env_prefix="ICHOR_", extra="ignore", hide_input_in_errors=True
    )

    redis_url: str | None = None
    data_dir: Path = Path(".ichor-data")
    # Each may hold several secrets separated by commas, so one can be rotated without
    # dropping deliveries: any of them verifies.
    github_webhook_secret: str | None = Field(default=None, repr=False)
    gitlab_webhook_secret: str | None = Field(default=None, repr=False)
    gitlab_signing_secret: str | None = Field(default=None, repr=False)
    gitea_webhook_secret: str | None = Field(default=None, repr=False)
    # GitHub App (issue 5): the app id and its private key, PEM text or a path to a PEM file.
    github_app_id: str | None = None
    github_private_key: str | None = Field(default=None, repr=False)
    # REST API base (GitHub Enterprise Server: https://HOST/api/v3) and the web/git base whose
    # host is the only one tokens are ever sent to.
    github_api_url: str = "https://api.github.com"
    github_url: str = "https://github.com"
    # Also keep one summary comment on each PR (the check run carries the result already).
    github_summary_comment: bool = False
    # GitLab (python-gitlab) and Gitea/Forgejo: base URL and an API token.
    gitlab_url: str = "https://gitlab.com"
    gitlab_token: str | None = Field(default=None, repr=False)
    gitea_url: str | None = None
    gitea_token: str | None = Field(default=None, repr=False)
    # Line comments on the lines a change touches (all forges); at most this many new per push.
    line_comments: bool = True
    line_comment_limit: int = 30
    # Repositories on disk served by the `local` forge (no network): a delivery whose repository
    # is <local_repos>/<owner>/<name> is checked there and its result kept under data_dir.
    local_repos: Path | None = None
    # Where people can see a result (status page); used for links from the forge.
    public_url: str | None = None
    # GET /setup/github (register the GitHub App from a manifest): off unless asked for, as it
    # hands out a new app's private key to whoever completes it.
    setup_enabled: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    # All request bodies held at once, together (never less than one body of the limit).
    body_budget_bytes: int = DEFAULT_BODY_BUDGET_BYTES
    # One request's line and headers; a request head slower than the header timeout (from
    # its first byte, or from the connection for the first request), or a body slower than
    # the body timeout, closes the connection. Past max_connections, the connection idle
    # longest is closed to make room.
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    header_timeout_seconds: float = 10.0
    body_timeout_seconds: float = 60.0
    max_connections: int = 500
    # How long a request waits on Redis: then a delivery is spooled, a page shows "unknown".
    redis_timeout_seconds: float = 0.5
    # "user:password": basic auth on the status page and /metrics (not probes or webhooks).
    status_auth: str | None = Field(default=None, repr=False)
    spool_max_files: int = 10_000
    queue_name: str = "ichor"
    # Jobs and workers (see the README): a check job is stopped after job_timeout seconds; a
    # busy worker says it is alive every worker_heartbeat seconds, and a job whose worker has
    # not for job_heartbeat_ttl seconds is abandoned: every worker_reap_interval seconds one
    # worker puts such jobs back on the queue. A worker rides out a Redis outage of up to
    # redis_outage seconds (each call is retried with backoff), then gives up.
    job_timeout: int = Field(default=600, ge=1)
    worker_heartbeat: float = Field(default=5.0, gt=0)
    job_heartbeat_ttl: int = Field(default=15, ge=1)
    worker_reap_interval: float = Field(default=5.0, gt=0)
    redis_outage: float = Field(default=600.0, ge=0)
    # The change API (POST /api/v1/changes): "name=token" pairs separated by commas; the name
    # is the actor. None configured: every request is 401. A request waits for its job's
    # answer at most api_wait_seconds (then 504; the job goes on).
    api_tokens: Annotated[tuple[tuple[str, str], ...], NoDecode] = Field(default=(), repr=False)
    api_wait_seconds: float = Field(default=60.0, gt=0, le=600)
    host: str = "127.0.0.1"
    port: int = 8000

    @field_validator("api_tokens", mode="before")
    @classmethod
    def _api_tokens(cls, value: object) -> object:
        return parse_api_tokens(value) if isinstance(value, str) else value

    def webhook_secrets(self, forge: str) -> tuple[str, ...]:
        """The secrets configured for ``forge`` (github, gitlab or gitea), in order."""
        raw: str | None = getattr(self, f"{forge}_webhook_secret", None)
        return split_secrets(raw)


def split_secrets(raw: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (raw or "").split(",") if part.strip())


def parse_api_tokens(raw: str) -> tuple[tuple[str, str], ...]:
    """``ui=s3cret-token,cli=other-token`` as (name, token) pairs; a malformed pair, a name
    used twice or a short token stops the start-up (ValueError, naming the pair, never the
    token)."""
    pairs: list[tuple[str, str]] = []
    for number, part in enumerate((p.strip() for p in raw.split(",")), start=1):
        if not part:
            continue
        name, equals, token = part.partition("=")
        name, token = name.strip(), token.strip()
        if not equals or not _API_CLIENT.fullmatch(name):
            raise ValueError(f"ICHOR_API_TOKENS: pair {number} is not name=token")
        if len(token) < MIN_API_TOKEN_CHARS or any(
            c.isspace() or not c.isprintable() for c in token
        ):
            raise ValueError(
                f"ICHOR_API_TOKENS: the token of {name!r} is shorter than "
                f"{MIN_API_TOKEN_CHARS} characters or holds a space"
            )
        if any(name == known for known, _ in pairs):
            raise ValueError(f"ICHOR_API_TOKENS: {name!r} is named twice")
        pairs.append((name, token))
    return tuple(pairs)


def load_settings() -> Settings:
    return Settings()
