"""GitHub pull requests: finding one by branch, opening, listing the open ones into a base and
rewriting a description (the onboarding pull request's, as its proposal changes).

Each function takes the adapter's ``send`` (a request with the installation's token) and runs
inside the adapter's retried operation.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote, urlencode

from bot.errors import PermanentForgeError
from bot.forges.base import PullRequestRef
from bot.forges.github.payloads import clip, clip_title, pull_ref, repo_path
from bot.forges.github.reviews import Send
from bot.forges.pulls import open_or_find
from bot.repos import RepoRef

MAX_LISTED = 100  # GitHub's largest page


def find(send: Send, repo: RepoRef, head: str, base: str) -> PullRequestRef | None:
    owner = repo.full_name.partition("/")[0]
    query = urlencode({"state": "open", "head": f"{owner}:{head}", "base": base}, quote_via=quote)
    path = repo_path(repo, "/pulls")
    found = send("GET", f"{path}?{query}")
    if not isinstance(found, list):
        raise PermanentForgeError(f"GitHub GET {path}: the response is not a list")
    return pull_ref(found[0], path) if found else None


def open_(
    send: Send, repo: RepoRef, *, head: str, base: str, title: str, body: str
) -> PullRequestRef:
    path = repo_path(repo, "/pulls")
    data = {"title": clip_title(title), "head": head, "base": base, "body": clip(body)}

    def open_once() -> PullRequestRef:
        return pull_ref(send("POST", path, data), path)

    return open_or_find(open_once, lambda: find(send, repo, head, base), exists=422)


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
    return [pull_ref(item, path) for item in found[:limit]]


def update_body(send: Send, repo: RepoRef, number: int, body: str) -> None:
    send("PATCH", repo_path(repo, f"/pulls/{int(number)}"), {"body": clip(body)})
