"""Commit statuses of the fake GitLab, with GitLab's state machine for external statuses.

Per project, sha and name: a new status starts ``created``; ``pending`` enqueues it, ``running``
enqueues (if needed) and runs it, ``success``/``failed``/``canceled`` finish it. A transition the
state machine refuses is **400** ``Cannot transition status via :run from :running (Reason(s):
...)``. Posting the state a status already has is refused that way too, a finished state
included; another state after a finished one starts a new status (a retried job).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from tests.fakeforge.base import Reject
from tests.fakeforge.gitlab.core import GitLabCore
from tests.fakeforge.gitlab.records import iso
from tests.fakeforge.gitlab.routes import not_found
from tests.fakeforge.httpserver import Response

FINAL_STATES = frozenset({"success", "failed", "canceled"})
# The state machine event GitLab names in its refusal for each posted state.
EVENTS = {
    "pending": "enqueue",
    "running": "run",
    "success": "success",
    "failed": "drop",
    "canceled": "cancel",
}


class Statuses(GitLabCore):
    # ------------------------------------------------------------------ observing
    def statuses(self, full_name: str, sha: str) -> list[dict[str, Any]]:
        """Commit statuses on ``sha``, oldest first, each with the ``history`` of its states."""
        with self._lock:
            project = self._project(full_name)
            return [copy.deepcopy(s) for s in project["statuses"] if s["sha"] == sha]

    # ------------------------------------------------------------------ handlers
    def _op_post_status(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project = self._find_project(path["project"])
        sha = path["sha"]
        if not re.fullmatch(r"[0-9a-f]{7,40}", sha) or self._commit_missing(project, sha):
            raise not_found("Commit Not Found")
        name = str(params.get("name") or params.get("context") or "default")
        state = str(params["state"])
        mine = [s for s in project["statuses"] if s["sha"] == sha and s["name"] == name]
        status = mine[-1] if mine else None
        if status is not None and status["status"] == state:
            raise self._refused(state, state)
        if status is None or status["status"] in FINAL_STATES:
            status = {
                "id": self._next_id("status"),
                "sha": sha,
                "ref": params.get("ref") or project["default_branch"],
                "status": "created",
                "name": name,
                "target_url": None,
                "description": None,
                "created_at": iso(),
                "started_at": None,
                "finished_at": None,
                "allow_failure": False,
                "coverage": None,
                "author": self._render_user(self.bot_user_id),
                "history": ["created"],
            }
            project["statuses"].append(status)
        current = status["status"]
        if state == "running" and current == "created":
            current = "pending"  # GitLab enqueues, then runs, a status posted as running
        allowed = {"pending": {"created"}, "running": {"pending"}}.get(
            state, {"created", "pending", "running"}
        )
        if current not in allowed:
            raise self._refused(state, current)
        if current != status["status"]:
            status["history"].append(current)
        status["status"] = state
        status["history"].append(state)
        if state == "running":
            status["started_at"] = iso()
        if state in FINAL_STATES:
            status["finished_at"] = iso()
        for key in ("target_url", "description", "coverage"):
            if key in params:
                status[key] = params[key]
        return Response(201, {k: v for k, v in status.items() if k != "history"})

    def _op_list_statuses(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project = self._find_project(path["project"])
        sha, name = path["sha"], params.get("name")
        if self._commit_missing(project, sha):
            raise not_found("Commit Not Found")
        mine = [
            s
            for s in project["statuses"]
            if s["sha"] == sha and (name is None or s["name"] == name)
        ]
        if not params.get("all"):
            latest: dict[str, dict[str, Any]] = {}
            for status in mine:
                latest[status["name"]] = status
            mine = list(latest.values())
        items = [{k: v for k, v in st.items() if k != "history"} for st in mine]
        return self._paged(path, params, items)

    def _refused(self, state: str, current: str) -> Reject:
        event = EVENTS[state]
        message = (
            f"Cannot transition status via :{event} from :{current} "
            f'(Reason(s): Status cannot transition via "{event}")'
        )
        return Reject(Response(400, {"message": message}))
