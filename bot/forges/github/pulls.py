"""Finding GitHub's open pull request from a branch into a base, and listing the open ones into
a base (reading, opening and rewriting one is :mod:`bot.forges.rest.pulls`). Each runs inside
the adapter's retried operation."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote, urlencode

from bot.errors import PermanentForgeError
from bot.forges.base import PullRequestRef
from bot.forges.github.payloads import DIALECT, repo_path
from bot.forges.rest.pulls import pull_ref
from bot.forges.rest.send import Send
from bot.repos import RepoRef

MAX_LISTED = 100  # GitHub's largest page


def find(send: Send, repo: RepoRef, head: str, base: str) -> PullRequestRef | None:
    owner = repo.full_name.partition("/")[0]
    query = urlencode({"state": "open", "head": f"{owner}:{head}", "base": base}, quote_via=quote)
    path = repo_path(repo, "/pulls")
    found = send("GET", f"{path}?{query}")
    if not isinstance(found, list):
        raise PermanentForgeError(f"GitHub GET {path}: the response is not a list")
    return pull_ref(found[0], path, DIALECT) if found else None


def listed(send: Send, repo: RepoRef, base: str, limit: int) -> Sequence[PullRequestRef]:
    """The open pull requests into ``base``, newest first, at most ``limit`` (one page)."""
    query = urlencode(
        {
            "state": "open",
            "base": base,
            "sort": "created",
            "direction": "desc",
            "per_page": max(1, min(limit, MAX_LISTED)),
        },
        quote_via=quote,
    )
    path = repo_path(repo, "/pulls")
    found = send("GET", f"{path}?{query}")
    if not isinstance(found, list):
        raise PermanentForgeError(f"GitHub GET {path}: the response is not a list")
    return [pull_ref(item, path, DIALECT) for item in found[:limit]]
