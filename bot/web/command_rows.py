"""The status page's commands: audit records as table rows, with only links that are safe.

Where the page reads them from (:func:`bot.state.audit.audit_source`) follows the queue: the
Redis stream the workers write when the bot runs on Redis, else the in-process queue's own
memory, shared with the jobs of this process (``ichor-bot serve`` hands it in). Every value of
a record came from a forge or a comment: the template shows it as text (autoescaped, control
characters written as escapes), and a link is made only from an http(s) URL.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC
from urllib.parse import quote, urlsplit

from bot.settings import Settings
from bot.state.base import AuditRecord

OVERVIEW_COMMANDS = 20
PAGE_COMMANDS = 200
# Where a forge shows a pull request, below the repository's page.
PULL_PATH = {"github": "pull", "gitlab": "-/merge_requests", "gitea": "pulls"}
_REPO = re.compile(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+")
_RESULT_KINDS = ("done", "pr-opened", "pr-existing", "refused", "usage", "error")
# Characters a link keeps as they are: the reserved and unreserved ones, and "%" of an escape.
_URL_SAFE = ":/?#[]@!$&'()*+,;=%-._~"


@dataclass(frozen=True, slots=True)
class CommandRow:
    """One record as the page shows it: ``pull`` links the pull request the command was given
    on, ``pr_url`` the pull request it opened or found (both None when not http(s))."""

    record: AuditRecord
    when: str
    pull: str | None
    pr_url: str | None
    kind: str  # the result's first word, for its style: done, refused, error, ... or other


def safe_link(url: str | None) -> str | None:
    """``url`` when it is an http(s) URL with a host, percent-encoded; else None (never a
    ``javascript:``, ``data:`` or relative link from stored data)."""
    if not url or any(not c.isprintable() or c.isspace() for c in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return quote(url, safe=_URL_SAFE)


def pull_link(
    forge_urls: Mapping[str, str], forge: str, repo: str, number: int | None
) -> str | None:
    """The pull request's page on its forge, when its base URL is known and the repository
    name is one a forge allows."""
    base = safe_link(forge_urls.get(forge))
    if base is None or number is None or forge not in PULL_PATH or not _REPO.fullmatch(repo):
        return None
    if any(part in (".", "..") for part in repo.split("/")):
        return None
    return f"{base.rstrip('/')}/{repo}/{PULL_PATH[forge]}/{number}"


def _kind(result: str) -> str:
    word = result.split(":", 1)[0].strip()
    return word if word in _RESULT_KINDS else "other"


def command_rows(records: Sequence[AuditRecord], forge_urls: Mapping[str, str]) -> list[CommandRow]:
    return [
        CommandRow(
            record=r,
            when=r.time.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
            pull=pull_link(forge_urls, r.forge, r.repo, r.number),
            pr_url=safe_link(r.pr_url),
            kind=_kind(r.result),
        )
        for r in records
    ]


def forge_urls(settings: Settings) -> dict[str, str]:
    """Each forge's web base from the settings (the local forge has none)."""
    urls = {"github": settings.github_url, "gitlab": settings.gitlab_url}
    if settings.gitea_url:
        urls["gitea"] = settings.gitea_url
    return urls
