"""Gitea and Forgejo pull requests: finding the open one from a branch into a base and listing
the open ones into a base (reading, opening and rewriting one is :mod:`bot.forges.rest.pulls`).
Each runs inside the adapter's retried operation."""

from __future__ import annotations

from urllib.parse import quote

from bot.errors import ForgeStatusError
from bot.forges.base import PullRequestRef
from bot.forges.gitea.http import DIALECT, GiteaHTTP, repo_path
from bot.forges.responses import side
from bot.forges.rest.pulls import pull_ref
from bot.repos import RepoRef


def find(http: GiteaHTTP, repo: RepoRef, head: str, base: str) -> PullRequestRef | None:
    path = repo_path(repo, f"/pulls/{quote(base, safe='')}/{quote(head, safe='')}")
    try:
        found = http.get(path)
    except ForgeStatusError as exc:
        if exc.status == 404:
            return None
        raise
    if isinstance(found, dict) and found.get("state") == "open":
        return pull_ref(found, path, DIALECT)
    # That lookup ignores state: it may name an old closed pull while an open one exists.
    pulls = repo_path(repo, "/pulls")
    for item in http.pages(pulls, {"state": "open"}):
        h, b = side(item, "head"), side(item, "base")
        if h.get("ref") == head and b.get("ref") == base and h.get("repo_id") == b.get("repo_id"):
            return pull_ref(item, pulls, DIALECT)
    return None


def listed(http: GiteaHTTP, repo: RepoRef, base: str, limit: int) -> list[PullRequestRef]:
    """The open pull requests into ``base``, newest first, at most ``limit``. Gitea filters by
    ``base_branch`` and Forgejo by ``base``, so the base is matched here, on every page."""
    pulls = repo_path(repo, "/pulls")
    found = [
        pull_ref(item, pulls, DIALECT)
        for item in http.pages(pulls, {"state": "open"})
        if side(item, "base").get("ref") == base
    ]
    return sorted(found, key=lambda p: -p.number)[:limit]
