"""A fake GitLab (REST API v4, and git over smart HTTP on the same port) for tests.

There is no recorded GitLab OpenAPI description, so requests are checked against what GitLab's
REST documentation states for the endpoints served, and answered the way GitLab answers:

* auth: ``PRIVATE-TOKEN: <token>`` or ``Authorization: Bearer <token>``, else **401**
  ``{"message": "401 Unauthorized"}`` (``auth_failures``).
* parameters (query, JSON or form body, merged as GitLab's Grape API merges them): required
  ones present, enums (status ``state``, MR list ``state``, notes ``sort``/``order_by``),
  integers, booleans, lengths (status description ≤ 255, note ≤ 1,000,000 characters), a
  diff position's required fields → **400** ``{"error": "<param> is missing"}`` or ``"...
  does not have a valid value"``. A parameter the endpoint does not document is accepted, as
  GitLab ignores it, but recorded. Everything here lands in ``validation_errors``.
* commit status state machine (per project, sha and name, as GitLab's external statuses):
  a new status starts ``created``; ``pending`` enqueues it, ``running`` enqueues (if needed)
  and runs it, ``success``/``failed``/``canceled`` finish it. A transition GitLab's state
  machine refuses is **400** ``Cannot transition status via :run from :running (Reason(s):
  ...)``. Posting the state a status already has is refused that way too, a finished state
  included; another state after a finished one starts a new status (a retried job).
* a diff discussion's ``position`` must carry the MR's latest version's base, start and head
  shas (``GET .../versions``), else **400** (the note's line code cannot be resolved).
* a note (or discussion, or a merge request's description, new or edited) whose line starts
  with one of GitLab's quick actions (``/approve``, ``/merge`` ...) outside a code fence is
  served, as GitLab would, and recorded in ``validation_errors``: GitLab would run it as the
  bot's user.
* unknown routes **404** ``{"error": "404 Not Found"}`` (recorded: the fake serves exactly
  the endpoints the adapter uses).

Payload shapes (user, project, merge request, note with position) follow the recorded GitLab
payloads in ``shared/forge-data/gitlab/``. Faults (``inject``) work as FakeGitHub's, plus
``after=True``: the request takes effect and *then* the fault answers (a lost response).

Git: ``/<full_name>.git/...`` is proxied to :class:`tests.support.git_http.GitHttpServer`
(bare repositories under ``git_root``), which accepts ``Authorization: Basic`` with any
non-blank user name and the token as password, as GitLab does for access tokens.

One module per concern, composed into :class:`FakeGitLab` here: ``core`` (state, the request
pipeline, paging), ``routes`` (the endpoints and their parameter checks), ``records`` (calls,
faults, timestamps), ``auth`` (tokens, users, members), ``repositories`` (projects, git),
``groups`` (teams and their members), ``statuses``, ``merge_requests``, ``notes`` (comments
and award emoji), ``discussions`` and ``faults``.
"""

from __future__ import annotations

import time

from tests.fakeforge.gitlab.auth import Auth
from tests.fakeforge.gitlab.discussions import Discussions
from tests.fakeforge.gitlab.faults import Faults
from tests.fakeforge.gitlab.groups import Groups
from tests.fakeforge.gitlab.merge_requests import MergeRequests
from tests.fakeforge.gitlab.notes import Notes
from tests.fakeforge.gitlab.records import Call, Fault, iso
from tests.fakeforge.gitlab.routes import (
    DESCRIPTION_LIMIT,
    MR_DESCRIPTION_LIMIT,
    MR_STATES,
    NOTE_LIMIT,
    POSITION_TYPES,
    ROUTES,
    STATUS_STATES,
)
from tests.fakeforge.gitlab.statuses import EVENTS, FINAL_STATES, Statuses

__all__ = [
    "DESCRIPTION_LIMIT",
    "EVENTS",
    "FINAL_STATES",
    "MR_DESCRIPTION_LIMIT",
    "MR_STATES",
    "NOTE_LIMIT",
    "POSITION_TYPES",
    "ROUTES",
    "STATUS_STATES",
    "Call",
    "FakeGitLab",
    "Fault",
    "iso",
]


def _now() -> float:
    """The fake's clock (every part reads it through :func:`.records.now`; tests patch it)."""
    return time.time()


class FakeGitLab(Auth, Groups, MergeRequests, Statuses, Notes, Discussions, Faults):
    """GitLab's REST API v4 (and git over HTTP) on loopback, for one test.

    >>> with FakeGitLab(tmp_path / "git") as fake:                        # doctest: +SKIP
    ...     fake.add_project("group/gitops", project_id=1)
    ...     fake.add_merge_request("group/gitops", 7, head_sha=head, base_sha=base)
    ...     env = fake.env()  # ICHOR_GITLAB_URL, ICHOR_GITLAB_TOKEN
    """
