"""Settings from the environment (prefix ``ICHOR_``), read once at start-up, never at import."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated
from urllib.parse import quote, urlsplit, urlunsplit

from pydantic import Field, field_validator, model_validator
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

    redis_url: str | None = Field(default=None, repr=False)
    # Redis's password, kept apart from the URL so a Secret can hold it alone; put in the URL
    # (which must not carry one too) when the settings are read.
    redis_password: str | None = Field(default=None, repr=False)
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
    # Work that can wait (line comments, the reconciler, redeliveries) steps aside while fewer
    # than this share of a rate limit's requests are left (until the forge's window resets).
    rate_reserve: float = Field(default=0.2, ge=0, lt=1)
    # The sweep (with Redis): every reconcile_interval seconds one worker asks GitHub again for
    # the App's deliveries that never reached the bot (first tried within redelivery_window,
    # at most redelivery_limit a run, each tried at most redelivery_attempts times in all),
    # then looks at the open pull requests of the repositories the bot can post to and queues
    # a check for each head with no result (at most reconcile_repositories repositories per
    # forge and reconcile_pulls pull requests each, reconcile_checks checks queued, for at
    # most reconcile_seconds a run). A head a job already has is left to it reconcile_grace
    # seconds. 0 turns the sweep off.
    reconcile_interval: float = Field(default=300.0, ge=0)
    reconcile_repositories: int = Field(default=50, ge=1)
    reconcile_pulls: int = Field(default=50, ge=1, le=100)
    reconcile_checks: int = Field(default=20, ge=0)
    reconcile_seconds: float = Field(default=120.0, gt=0)
    reconcile_grace: float = Field(default=900.0, ge=0)
    redelivery_window: float = Field(default=6 * 3600.0, ge=0, le=3 * 24 * 3600.0)
    redelivery_limit: int = Field(default=20, ge=0)
    redelivery_attempts: int = Field(default=3, ge=1)
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
    # The status page's overview and repository pages reload every this many seconds (a meta
    # refresh, no script); 0 never. A viewer turns it off with ?refresh=0.
    status_refresh: int = Field(default=30, ge=0, le=3600)
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
    # A file a worker touches on every heartbeat round, for a probe to read (python -m
    # bot.cli.probe FILE SECONDS): a round waits while Redis is away, so its age says how long
    # the worker has been unable to take jobs, and a wedged worker stops touching it.
    worker_alive_file: Path | None = None
    # The change API (POST /api/v1/changes): "name=token" pairs separated by commas; the name
    # is the actor. None configured: every request is 401. A request waits for its job's
    # answer at most api_wait_seconds (then 504; the job goes on).
    api_tokens: Annotated[tuple[tuple[str, str], ...], NoDecode] = Field(default=(), repr=False)
    api_wait_seconds: float = Field(default=60.0, gt=0, le=600)
    host: str = "127.0.0.1"
    port: int = 8000

    @model_validator(mode="after")
    def _password_in_redis_url(self) -> Settings:
        if self.redis_password and self.redis_url:
            self.redis_url = redis_url_with_password(self.redis_url, self.redis_password)
        return self

    @field_validator("api_tokens", mode="before")
    @classmethod
    def _api_tokens(cls, value: object) -> object:
        return parse_api_tokens(value) if isinstance(value, str) else value

    def webhook_secrets(self, forge: str) -> tuple[str, ...]:
        """The secrets configured for ``forge`` (github, gitlab or gitea), in order."""
        raw: str | None = getattr(self, f"{forge}_webhook_secret", None)
        return split_secrets(raw)


def redis_url_with_password(url: str, password: str) -> str:
    """``url`` with ``password`` in it (percent-encoded); refused when it names one already."""
    parts = urlsplit(url)
    if parts.password is not None:
        raise ValueError(
            "ICHOR_REDIS_URL carries a password and ICHOR_REDIS_PASSWORD is set too: keep one"
        )
    user = quote(parts.username or "", safe="")
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:{quote(password, safe='')}@{host}"))


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


# What posting a result needs on each forge, by environment name and setting; the web and git
# bases have defaults (GitHub, GitLab) and are not counted.
_POSTING: dict[str, tuple[tuple[str, str], ...]] = {
    "github": (
        ("ICHOR_GITHUB_APP_ID", "github_app_id"),
        ("ICHOR_GITHUB_PRIVATE_KEY", "github_private_key"),
    ),
    "gitlab": (("ICHOR_GITLAB_TOKEN", "gitlab_token"),),
    "gitea": (("ICHOR_GITEA_URL", "gitea_url"), ("ICHOR_GITEA_TOKEN", "gitea_token")),
}
_SECRET = {
    "github": "ICHOR_GITHUB_WEBHOOK_SECRET",
    "gitlab": "ICHOR_GITLAB_WEBHOOK_SECRET",
    "gitea": "ICHOR_GITEA_WEBHOOK_SECRET",
}


@dataclass(frozen=True, slots=True)
class ForgeSetup:
    """What one forge's settings allow: taking its webhooks (a secret is set) and posting
    results to it (every setting posting needs is set). JSON-safe, so a worker can tell the
    web process, which holds only the secrets."""

    forge: str
    receives: bool
    present: tuple[str, ...] = ()  # the posting settings that are set (environment names)
    missing: tuple[str, ...] = ()  # and those that are not
    local_repos: bool = False  # ICHOR_LOCAL_REPOS: its repositories need no forge settings

    @property
    def posts(self) -> bool:
        return not self.missing

    def to_dict(self) -> dict[str, object]:
        return {
            "forge": self.forge,
            "receives": self.receives,
            "present": list(self.present),
            "missing": list(self.missing),
            "local_repos": self.local_repos,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> ForgeSetup:
        present, missing = data.get("present") or [], data.get("missing") or []
        if not isinstance(present, list) or not isinstance(missing, list):
            raise ValueError("present and missing are lists")
        return cls(
            str(data["forge"]),
            bool(data.get("receives")),
            tuple(str(p) for p in present),
            tuple(str(m) for m in missing),
            bool(data.get("local_repos")),
        )


def forge_setups(settings: Settings) -> tuple[ForgeSetup, ...]:
    """Each forge's setup as ``settings`` have it."""
    setups = []
    for forge, needs in _POSTING.items():
        present = tuple(env for env, name in needs if (getattr(settings, name) or "").strip())
        receives = bool(settings.webhook_secrets(forge))
        if forge == "gitlab":  # either kind of GitLab secret verifies on its own
            receives = receives or bool(split_secrets(settings.gitlab_signing_secret))
        setups.append(
            ForgeSetup(
                forge,
                receives,
                present,
                tuple(env for env, _ in needs if env not in present),
                settings.local_repos is not None,
            )
        )
    return tuple(setups)


def joined_setups(
    receiving: Iterable[ForgeSetup], posting: Iterable[ForgeSetup]
) -> tuple[ForgeSetup, ...]:
    """The web process's secrets with what a worker reported it can post to (the web process
    needs no forge credentials, so only a worker can say)."""
    posts = {s.forge: s for s in posting}
    return tuple(
        replace(posts[s.forge], receives=s.receives) if s.forge in posts else s for s in receiving
    )


def half_configured(setups: Iterable[ForgeSetup], *, receiving: bool = True) -> list[str]:
    """One line for each forge set up in part: a webhook secret without what posting needs
    (its deliveries are accepted and nothing can be posted), posting settings missing one of
    their parts, or, when ``receiving`` (the process takes webhooks), everything to post but
    no secret (every delivery is refused). A worker passes ``receiving=False``: the web
    process holds the secrets, and says itself which forges have none."""
    lines = []
    for setup in setups:
        secret = _SECRET.get(setup.forge, "its webhook secret")
        if setup.forge == "gitlab":
            secret += " (or ICHOR_GITLAB_SIGNING_SECRET)"
        have = ([secret] if setup.receives else []) + list(setup.present)
        lack = list(setup.missing) + ([secret] if receiving and not setup.receives else [])
        if not have or not lack:
            continue  # set up whole, or not at all
        effects = []
        if receiving and not setup.receives:
            effects.append("its deliveries are refused (401)")
        if setup.missing:
            cannot = "no result can be posted"
            if setup.receives:
                cannot = "its deliveries are accepted but " + cannot
            if setup.local_repos:
                cannot += " (repositories under ICHOR_LOCAL_REPOS are still checked)"
            effects.append(cannot)
        lines.append(
            f"{setup.forge} is half-configured: {_listed(have)} {_verb(have)} set, "
            f"{_listed(lack)} {_verb(lack)} not: {' and '.join(effects)}"
        )
    return lines


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _verb(names: list[str]) -> str:
    return "is" if len(names) == 1 else "are"
