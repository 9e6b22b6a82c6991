"""What the reconciler asks of Gitea and Forgejo (:class:`bot.forges.base.Reconciling`): the
repositories the token's user may push to (what posting a commit status needs), a repository's
open pull requests, and a head's commit status. Neither has conditional requests for these
listings, so the tag is never used."""

from __future__ import annotations

import logging
from urllib.parse import quote

from bot.errors import PermanentForgeError
from bot.forges.base import HeadCheck, OpenPulls
from bot.forges.gitea.http import PAGE_SIZE, GiteaHTTP, newest_status, repo_path
from bot.forges.responses import described_repository, pull_request
from bot.repos import ForgeKind, RepoRef

log = logging.getLogger("ichor.forge.gitea")

MAX_PAGES = 40  # of /user/repos


def repositories(http: GiteaHTTP, limit: int) -> list[RepoRef]:
    """The token's user's repositories it may push to, archived ones left out."""
    found: list[RepoRef] = []
    for page in range(1, MAX_PAGES + 1):
        reply = http.send("GET", "/user/repos", query={"limit": PAGE_SIZE, "page": page})
        if not isinstance(reply.body, list):
            raise PermanentForgeError("Gitea GET /user/repos: the response is not a list")
        for item in reply.body:
            if len(found) >= limit:
                return found
            permissions = item.get("permissions") if isinstance(item, dict) else None
            if not isinstance(permissions, dict) or not permissions.get("push"):
                continue
            if item.get("archived") or item.get("empty"):
                continue
            try:
                name = str(item.get("full_name"))
                found.append(
                    described_repository(item, ForgeKind.GITEA, name, "Gitea GET /user/repos")
                )
            except PermanentForgeError as exc:
                log.warning("a repository is left out: %s", exc)
        if not reply.body:
            break
    return found


def open_pulls(http: GiteaHTTP, repo: RepoRef, limit: int) -> OpenPulls:
    """At most ``limit`` open pull requests, the most recently updated first (one page)."""
    path = repo_path(repo, "/pulls")
    per_page = max(1, min(limit, PAGE_SIZE))
    query: dict[str, str | int] = {"state": "open", "sort": "recentupdate", "limit": per_page}
    reply = http.send("GET", path, query={**query, "page": 1})
    if not isinstance(reply.body, list):
        raise PermanentForgeError(f"Gitea GET {path}: the response is not a list")
    pulls = tuple(pull_request(item, f"Gitea GET {path}") for item in reply.body[:limit])
    total = reply.headers.get("x-total-count")
    more = len(reply.body) > limit or (total is not None and total.isdigit() and int(total) > limit)
    return OpenPulls(pulls, more=more)


def head_check(http: GiteaHTTP, repo: RepoRef, sha: str, context: str) -> HeadCheck:
    """The newest commit status of ``context`` on ``sha``: finished, pending, or none."""
    newest = newest_status(http.get(repo_path(repo, f"/statuses/{quote(sha, safe='')}")), context)
    if newest is None:
        return HeadCheck.NONE
    return HeadCheck.RUNNING if newest[0] == "pending" else HeadCheck.FINAL
