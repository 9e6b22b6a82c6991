"""What the reconciler asks of GitHub (:class:`bot.forges.base.Reconciling`): the
repositories of the App's installations, a repository's open pull requests (a conditional
request: a 304 does not count against the rate limit), and a head's check runs."""

from __future__ import annotations

import logging
from urllib.parse import quote, urlencode

from bot.errors import PermanentForgeError
from bot.forges.base import HeadCheck, OpenPulls
from bot.forges.github.app_calls import AppCalls
from bot.forges.github.payloads import installation_of, repo_path
from bot.forges.responses import described_repository, pull_request
from bot.repos import ForgeKind, RepoRef

log = logging.getLogger("ichor.forge.github")

PER_PAGE = 100  # GitHub's largest page
MAX_PAGES = 20  # of installations, and of each installation's repositories


def repositories(calls: AppCalls, limit: int) -> list[RepoRef]:
    """The repositories of every installation of the App that is not suspended, archived
    ones left out, at most ``limit``."""
    found: list[RepoRef] = []
    for installation in _installations(calls):
        url: str | None = f"/installation/repositories?per_page={PER_PAGE}"
        for _ in range(MAX_PAGES):
            if url is None or len(found) >= limit:
                break
            page = calls.as_installation(installation, url)
            items = page.data.get("repositories") if isinstance(page.data, dict) else None
            if not isinstance(items, list):
                raise PermanentForgeError(
                    "GitHub GET /installation/repositories: the response holds no repositories"
                )
            found += _repositories(items, installation)
            url = page.next_url
        if len(found) >= limit:
            break
    return found[:limit]


def _installations(calls: AppCalls) -> list[int]:
    ids: list[int] = []
    url: str | None = f"/app/installations?per_page={PER_PAGE}"
    for _ in range(MAX_PAGES):
        if url is None:
            break
        page = calls.as_app(url)
        if not isinstance(page.data, list):
            raise PermanentForgeError("GitHub GET /app/installations: the response is not a list")
        ids += [
            int(item["id"])
            for item in page.data
            if isinstance(item, dict)
            and isinstance(item.get("id"), int)
            and not item.get("suspended_at")
        ]
        url = page.next_url
    return ids


def _repositories(items: list[object], installation: int) -> list[RepoRef]:
    where = "GitHub GET /installation/repositories"
    found = []
    for item in items:
        if not isinstance(item, dict) or item.get("archived"):
            continue
        try:
            found.append(
                described_repository(
                    item,
                    ForgeKind.GITHUB,
                    str(item.get("full_name")),
                    where,
                    installation_id=installation,
                )
            )
        except PermanentForgeError as exc:  # one unusable answer costs its repository alone
            log.warning("a repository of installation %d is left out: %s", installation, exc)
    return found


def open_pulls(calls: AppCalls, repo: RepoRef, limit: int, tag: str | None) -> OpenPulls:
    """The open pull requests, the most recently updated first: one page of at most
    ``limit``, asked with ``tag`` as If-None-Match."""
    per_page = max(1, min(limit, PER_PAGE))
    query = urlencode(
        {"state": "open", "sort": "updated", "direction": "desc", "per_page": per_page}
    )
    path = repo_path(repo, "/pulls")
    page = calls.as_installation(installation_of(repo), f"{path}?{query}", tag)
    if page.unchanged:
        return OpenPulls(tag=page.tag, unchanged=True)
    if not isinstance(page.data, list):
        raise PermanentForgeError(f"GitHub GET {path}: the response is not a list")
    pulls = tuple(pull_request(item, f"GitHub GET {path}") for item in page.data[:limit])
    more = page.next_url is not None or len(page.data) > limit
    return OpenPulls(pulls, page.tag, more=more)


def head_check(calls: AppCalls, repo: RepoRef, sha: str, check_name: str) -> HeadCheck:
    """Whether ``sha`` has a completed check run of ``check_name``, or one in progress."""
    query = urlencode({"check_name": check_name, "filter": "latest", "per_page": PER_PAGE})
    path = repo_path(repo, f"/commits/{quote(sha, safe='')}/check-runs")
    page = calls.as_installation(installation_of(repo), f"{path}?{query}")
    runs = page.data.get("check_runs") if isinstance(page.data, dict) else None
    if not isinstance(runs, list):
        raise PermanentForgeError(f"GitHub GET {path}: the response holds no check runs")
    states = [r.get("status") for r in runs if isinstance(r, dict) and r.get("name") == check_name]
    if "completed" in states:
        return HeadCheck.FINAL
    return HeadCheck.RUNNING if states else HeadCheck.NONE
