"""What the reconciler asks of GitLab (:class:`bot.forges.base.Reconciling`): the projects the
token's user develops in (Developer or more: what posting a commit status needs), a project's
open merge requests, and a head's commit status. GitLab has no conditional requests for these
listings, so the tag is never used."""

from __future__ import annotations

import itertools
import logging

import gitlab

from bot.errors import PermanentForgeError
from bot.forges.base import HeadCheck, OpenPulls
from bot.forges.gitlab.api import PER_PAGE, mr_ref
from bot.forges.responses import described_repository
from bot.repos import ForgeKind, RepoRef

log = logging.getLogger("ichor.forge.gitlab")

DEVELOPER = 30  # GitLab's access level that may post commit statuses
RUNNING = frozenset({"created", "waiting_for_resource", "preparing", "pending", "running"})
KEYS = ("path_with_namespace", "http_url_to_repo", "web_url")


def projects(gl: gitlab.Gitlab, limit: int) -> list[RepoRef]:
    """The token's user's projects (Developer or more), not archived, most active first."""
    listed = gl.projects.list(
        membership=True,
        min_access_level=DEVELOPER,
        archived=False,
        order_by="last_activity_at",
        sort="desc",
        per_page=PER_PAGE,
        iterator=True,
    )
    found = []
    for project in itertools.islice(listed, max(0, limit)):
        item = project.attributes
        try:
            name = str(item.get("path_with_namespace"))
            found.append(
                described_repository(
                    item, ForgeKind.GITLAB, name, "GitLab GET /projects", keys=KEYS
                )
            )
        except PermanentForgeError as exc:  # an empty project has no default branch
            log.info("a project is left out: %s", exc)
    return found


def open_merge_requests(gl: gitlab.Gitlab, project: str, limit: int) -> OpenPulls:
    """At most ``limit`` open merge requests, the most recently updated first (one page)."""
    per_page = max(1, min(limit + 1, PER_PAGE))
    mrs = gl.projects.get(project, lazy=True).mergerequests.list(
        state="opened", order_by="updated_at", sort="desc", per_page=per_page, get_all=False
    )
    listed = [mr_ref(mr.attributes) for mr in mrs]
    return OpenPulls(tuple(listed[:limit]), more=len(listed) > limit)


def head_check(gl: gitlab.Gitlab, project: str, sha: str, name: str) -> HeadCheck:
    """The newest commit status of ``name`` on ``sha``: finished, running, or none."""
    commit = gl.projects.get(project, lazy=True).commits.get(sha, lazy=True)
    found = commit.statuses.list(name=name, get_all=False)
    ours = [st.attributes for st in found if st.attributes.get("name") == name]
    if not ours:
        return HeadCheck.NONE
    newest = max(ours, key=lambda st: int(st.get("id") or 0))
    return HeadCheck.RUNNING if str(newest.get("status")) in RUNNING else HeadCheck.FINAL
