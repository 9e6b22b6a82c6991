"""The GitHub App manifest flow, pure: the manifest, where it is posted, what comes back.

A platform team registers the App in one click: a page posts :func:`build_manifest` to
GitHub's app-creation page (:func:`creation_url`), GitHub creates the App and sends the
browser back with a temporary code, and ``POST /app-manifests/{code}/conversions`` answers the
App's id, webhook secret and private key (:func:`parse_conversion`). No I/O here:
:mod:`bot.web.setup_github` does the requests.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from bot.errors import IchorError
from bot.webhooks.payload import WebhookError, parse_json

APP_NAME = "Ichor Bot"
DESCRIPTION = (
    "Guards GitTarget paths in GitOps repositories: checks every pull request and push "
    "against the acceptance gate."
)
WEBHOOK_PATH = "/webhooks/github"
CALLBACK_PATH = "/setup/github/callback"
# What the code uses, and no more: check runs (checks), the summary comment and its reactions
# (issues), line comments, reviews and remediation pull requests (pull_requests), trees and
# the remediation branch (contents: write), the collaborator permission behind commands
# (metadata), and the merge_group event, which GitHub sends only to an App that may read merge
# queues (merge_queues). Statuses and organisation members are not used on GitHub.
PERMISSIONS: dict[str, str] = {
    "checks": "write",
    "contents": "write",
    "issues": "write",
    "members": "read",
    "merge_queues": "read",
    "metadata": "read",
    "pull_requests": "write",
}
# Every event bot.webhooks.github acts on that an App can subscribe to; installation and
# installation_repositories are sent to every App without subscribing.
EVENTS: tuple[str, ...] = (
    "check_run",
    "check_suite",
    "issue_comment",
    "merge_group",
    "pull_request",
    "pull_request_review_comment",
    "push",
)
# GitHub logins: letters, digits and single inner hyphens, at most 39 characters.
_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}")
# The temporary code and our state both travel in URLs: URL-safe characters, bounded.
_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,200}")
MAX_CONVERSION_BYTES = 1 << 20  # an App, a PEM and a few secrets: far under this


class ManifestError(IchorError):
    """A value of the manifest flow that cannot be used; the text names which and why."""


@dataclass(frozen=True, slots=True)
class AppCredentials:
    """What GitHub answers once for a code: the new App and its secrets."""

    app_id: int
    slug: str
    name: str
    html_url: str
    owner: str
    webhook_secret: str | None  # GitHub may leave it unset; then the App has none
    pem: str

    def __repr__(self) -> str:  # never a secret in a log line or a traceback
        return f"AppCredentials(app_id={self.app_id}, slug={self.slug!r})"


def public_base(url: str, what: str = "ICHOR_PUBLIC_URL") -> str:
    """``url`` as a base for the App's URLs: http(s), a host, no query, no trailing slash."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ManifestError(f"{what} is not an http(s) URL with a host: {url!r}")
    if parts.query or parts.fragment or "@" in parts.netloc:
        raise ManifestError(f"{what} must have no credentials, query or fragment: {url!r}")
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"


def build_manifest(base_url: str, *, name: str = APP_NAME) -> dict[str, Any]:
    """The App manifest for a bot served at ``base_url`` (as :func:`public_base` returns it)."""
    return {
        "name": name,
        "url": base_url,
        "description": DESCRIPTION,
        "hook_attributes": {"url": base_url + WEBHOOK_PATH, "active": True},
        "redirect_url": base_url + CALLBACK_PATH,
        "public": False,
        "default_permissions": dict(PERMISSIONS),
        "default_events": list(EVENTS),
    }


def check_org(org: str) -> str:
    if not _LOGIN.fullmatch(org):
        raise ManifestError(f"not a GitHub organization name: {org[:60]!r}")
    return org


def check_token(value: str, what: str) -> str:
    if not _TOKEN.fullmatch(value):
        raise ManifestError(f"the {what} is missing or malformed")
    return value


def creation_url(web_url: str, state: str, org: str | None = None) -> str:
    """GitHub's page that takes the manifest: the user's, or ``org``'s when given.

    ``web_url`` is the web host (``https://github.com``, Enterprise Server ``https://HOST``),
    never the API's; ``state`` comes back on the redirect, unchanged.
    """
    base = public_base(web_url, "ICHOR_GITHUB_URL")
    where = (
        "/settings/apps/new"
        if org is None
        else f"/organizations/{check_org(org)}/settings/apps/new"
    )
    return f"{base}{where}?{urlencode({'state': check_token(state, 'state')})}"


def conversion_path(code: str) -> str:
    return f"/app-manifests/{quote(check_token(code, 'code'), safe='')}/conversions"


def parse_conversion(body: bytes) -> AppCredentials:
    """GitHub's 201 answer to the conversion, typed; a missing or wrong field is named."""
    if len(body) > MAX_CONVERSION_BYTES:
        raise ManifestError("GitHub's answer to the code exchange is over 1 MiB")
    try:
        data = parse_json(body)
        owner = data.opt_obj("owner")
        credentials = AppCredentials(
            app_id=data.number("id"),
            slug=data.name("slug"),
            name=data.text("name"),
            html_url=data.text("html_url"),
            owner="" if owner is None else owner.peek_text("login") or "",
            webhook_secret=data.opt_text("webhook_secret") or None,
            pem=data.text("pem"),
        )
    except WebhookError as exc:
        raise ManifestError(f"GitHub's answer to the code exchange: {exc}") from None
    if "PRIVATE KEY-----" not in credentials.pem:
        raise ManifestError("GitHub's answer to the code exchange: field pem is not a PEM key")
    if urlsplit(credentials.html_url).scheme not in ("http", "https"):  # it becomes a link
        raise ManifestError("GitHub's answer to the code exchange: field html_url is not a URL")
    return credentials


def environment_lines(app: AppCredentials) -> str:
    """The settings to give the bot, as POSIX shell assignments (the PEM quoted whole)."""
    lines = [
        f"ICHOR_GITHUB_APP_ID={app.app_id}",
        f"ICHOR_GITHUB_PRIVATE_KEY={shlex.quote(app.pem.strip())}",
    ]
    if app.webhook_secret:
        lines.append(f"ICHOR_GITHUB_WEBHOOK_SECRET={shlex.quote(app.webhook_secret)}")
    return "\n".join(lines) + "\n"
