"""GitLab merge requests the bot opens, lists and describes: each function runs under
``GitLabAPI.run`` with the python-gitlab client, inside the adapter's retry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gitlab

from bot.forges import clipping
from bot.forges.base import PullRequestRef
from bot.forges.gitlab.api import clip, find_mr, mr_ref
from bot.forges.pulls import open_or_find

Run = Callable[[Callable[[gitlab.Gitlab], Any]], Any]  # GitLabAPI.run

TITLE_LIMIT = 255  # characters, a merge request title
DESCRIPTION_BODY_LIMIT = 1_048_576  # characters, a merge request description
MAX_LISTED = 100  # GitLab's largest page


def open_mr(
    gl: gitlab.Gitlab, project: str, *, head: str, base: str, title: str, body: str
) -> PullRequestRef:
    data = {
        "source_branch": head,
        "target_branch": base,
        "title": clipping.clip(title, TITLE_LIMIT),
        "description": clip(body, DESCRIPTION_BODY_LIMIT),
    }
    return mr_ref(gl.projects.get(project, lazy=True).mergerequests.create(data).attributes)


def find(gl: gitlab.Gitlab, project: str, head: str, base: str) -> PullRequestRef | None:
    return find_mr(gl, project, head, base)


def open_or_existing(
    run: Run, project: str, *, head: str, base: str, title: str, body: str
) -> PullRequestRef:
    """Open it, or, when GitLab answers 409 (one is open for the branches), the open one."""
    opened: PullRequestRef = open_or_find(
        lambda: run(lambda gl: open_mr(gl, project, head=head, base=base, title=title, body=body)),
        lambda: run(lambda gl: find(gl, project, head, base)),
        exists=409,
    )
    return opened


def listed(gl: gitlab.Gitlab, project: str, base: str, limit: int) -> list[PullRequestRef]:
    """The open merge requests into ``base``, newest first, at most ``limit`` (one page)."""
    mrs = gl.projects.get(project, lazy=True).mergerequests.list(
        state="opened",
        target_branch=base,
        order_by="created_at",
        sort="desc",
        per_page=max(1, min(limit, MAX_LISTED)),
        get_all=False,
    )
    return [mr_ref(mr.attributes) for mr in mrs[:limit]]


def set_description(gl: gitlab.Gitlab, project: str, iid: int, body: str) -> None:
    gl.projects.get(project, lazy=True).mergerequests.update(
        iid, {"description": clip(body, DESCRIPTION_BODY_LIMIT)}
    )
