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
* unknown routes **404** ``{"error": "404 Not Found"}`` (recorded: the fake serves exactly
  the endpoints the adapter uses).

Payload shapes (user, project, merge request, note with position) follow the recorded GitLab
payloads in ``shared/forge-data/gitlab/``. Faults (``inject``) work as FakeGitHub's, plus
``after=True``: the request takes effect and *then* the fault answers (a lost response).

Git: ``/<full_name>.git/...`` is proxied to :class:`tests.support.git_http.GitHttpServer`
(bare repositories under ``git_root``), which accepts ``Authorization: Basic`` with any
non-blank user name and the token as password, as GitLab does for access tokens.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from tests.fakeforge import base
from tests.fakeforge.base import FakeForgeBase, RecordedCall, Reject, redacted, run_git
from tests.fakeforge.httpserver import Request, Response

STATUS_STATES = ("pending", "running", "success", "failed", "canceled")
FINAL_STATES = frozenset({"success", "failed", "canceled"})
# The state machine event GitLab names in its refusal for each posted state.
_EVENTS = {
    "pending": "enqueue",
    "running": "run",
    "success": "success",
    "failed": "drop",
    "canceled": "cancel",
}
MR_STATES = ("opened", "closed", "locked", "merged", "all")
POSITION_TYPES = ("text", "image", "file")
DESCRIPTION_LIMIT = 255
NOTE_LIMIT = 1_000_000
MR_DESCRIPTION_LIMIT = 1_048_576
_PAGING = {"page": "int", "per_page": "int"}

# Route name → (method, path pattern under /api/v4, parameter rules). Rules: "str", "int",
# "bool", "position", a tuple of allowed values; a leading "!" marks a required parameter.
_P = "/projects/(?P<project>[^/]+)"
_MR = _P + "/merge_requests/(?P<iid>[^/]+)"
ROUTES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "current_user": ("GET", "/user", {}),
    "list_users": ("GET", "/users", {"username": "str", **_PAGING}),
    "post_status": (
        "POST",
        _P + "/statuses/(?P<sha>[^/]+)",
        {
            "state": ("!", *STATUS_STATES),
            "ref": "str",
            "name": "str",
            "context": "str",
            "target_url": "str",
            "description": "str",
            "coverage": "float",
            "pipeline_id": "int",
        },
    ),
    # GET /projects/:id/repository/commits/:sha/statuses: the latest status per name, or every
    # one with all=true, by id ascending (GitLab's default order).
    "list_statuses": (
        "GET",
        _P + "/repository/commits/(?P<sha>[^/]+)/statuses",
        {"ref": "str", "stage": "str", "name": "str", "all": "bool", **_PAGING},
    ),
    "list_mrs": (
        "GET",
        _P + "/merge_requests",
        {
            "state": MR_STATES,
            "source_branch": "str",
            "target_branch": "str",
            "order_by": ("created_at", "updated_at", "title"),
            "sort": ("asc", "desc"),
            **_PAGING,
        },
    ),
    "create_mr": (
        "POST",
        _P + "/merge_requests",
        {
            "source_branch": "!str",
            "target_branch": "!str",
            "title": "!str",
            "description": "str",
            "target_project_id": "int",
            "remove_source_branch": "bool",
            "squash": "bool",
        },
    ),
    "get_mr": ("GET", _MR, {}),
    "list_versions": ("GET", _MR + "/versions", dict(_PAGING)),
    "list_notes": (
        "GET",
        _MR + "/notes",
        {"sort": ("asc", "desc"), "order_by": ("created_at", "updated_at"), **_PAGING},
    ),
    "create_note": ("POST", _MR + "/notes", {"body": "!str", "internal": "bool"}),
    "update_note": ("PUT", _MR + "/notes/(?P<note_id>[^/]+)", {"body": "!str"}),
    "list_discussions": ("GET", _MR + "/discussions", dict(_PAGING)),
    "create_discussion": (
        "POST",
        _MR + "/discussions",
        {"body": "!str", "position": "position", "commit_id": "str", "created_at": "str"},
    ),
    "update_discussion": (
        "PUT",
        _MR + "/discussions/(?P<discussion_id>[0-9a-f]+)",
        {"resolved": "!bool"},
    ),
    "get_member": ("GET", _P + "/members/all/(?P<user_id>[^/]+)", {}),
}
_COMPILED = [
    (name, method, re.compile("/api/v4" + pattern)) for name, (method, pattern, _) in ROUTES.items()
]
_INT_PARAMS = ("iid", "note_id", "user_id")
_GIT_PATH = re.compile(r"/(?P<repo>.+)\.git/(?:info/refs|git-upload-pack|git-receive-pack)")


def _now() -> float:
    return time.time()


def iso(ts: float | None = None) -> str:
    moment = datetime.fromtimestamp(_now() if ts is None else ts, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass
class Call(RecordedCall):
    """One API request the fake answered. ``headers`` has the token cut out; ``token`` is the
    credential that was sent, for assertions."""

    method: str
    path: str
    query: dict[str, str]
    json: Any
    body: bytes
    headers: dict[str, str]
    token: str | None
    route: str | None = None
    status: int = 0
    response: Any = None
    errors: list[str] = field(default_factory=list)
    fault: Fault | None = None
    time: float = 0.0


@dataclass
class Fault(base.Fault):
    """An injected failure. ``times=None`` fires forever. ``status`` None: served normally,
    ``delay`` seconds late (after its effect). ``after``: served (its effect happens), then
    answered with ``status`` instead: a response lost on the way back."""

    after: bool = False


def _bad_request(message: str, *, key: str = "error") -> Reject:
    return Reject(Response(400, {key: message}), "validation_errors", message)


def _not_found(what: str = "Not found") -> Reject:
    return Reject(Response(404, {"message": f"404 {what}"}))


class FakeGitLab(FakeForgeBase[Call]):
    """GitLab's REST API v4 (and git over HTTP) on loopback, for one test.

    >>> with FakeGitLab(tmp_path / "git") as fake:                        # doctest: +SKIP
    ...     fake.add_project("group/gitops", project_id=1)
    ...     fake.add_merge_request("group/gitops", 7, head_sha=head, base_sha=base)
    ...     env = fake.env()  # ICHOR_GITLAB_URL, ICHOR_GITLAB_TOKEN
    """

    _fault_type = Fault

    def __init__(
        self,
        git_root: Path | None = None,
        *,
        token: str | None = None,
        bot_username: str = "ichor-bot",
        first_id: int = 1,
    ) -> None:
        super().__init__(git_root, first_id=first_id)
        self.token = token or "glpat-" + secrets.token_urlsafe(15)[:20]
        self.bot_username = bot_username
        self._users: dict[int, dict[str, Any]] = {}
        self._projects: dict[int, dict[str, Any]] = {}
        self.bot_user_id = self.add_user(bot_username, name="Ichor Bot")

    # ------------------------------------------------------------------ lifecycle
    def env(self) -> dict[str, str]:
        """The instance URL (the API is under ``/api/v4``, git on the same origin) and token."""
        return {"ICHOR_GITLAB_URL": self.url, "ICHOR_GITLAB_TOKEN": self.token}

    def basic_auth_header(self, token: str | None = None, user: str = "oauth2") -> str:
        raw = base64.b64encode(f"{user}:{token or self.token}".encode()).decode()
        return f"Authorization: Basic {raw}"

    # ------------------------------------------------------------------ test set-up
    def add_user(self, username: str, *, name: str | None = None) -> int:
        with self._lock:
            for user in self._users.values():
                if user["username"] == username:
                    return int(user["id"])
            user_id = self._next_id("user")
            self._users[user_id] = {
                "id": user_id,
                "username": username,
                "name": name or username.title(),
                "state": "active",
                "created_at": iso(),
            }
            return user_id

    def add_project(
        self, full_name: str, project_id: int | None = None, *, default_branch: str = "main"
    ) -> dict[str, Any]:
        if not full_name or full_name.strip("/") != full_name or "/" not in full_name:
            raise ValueError(f"namespace/name expected, got {full_name!r}")
        with self._lock:
            pid = project_id if project_id is not None else self._next_id("project")
            self._projects[pid] = {
                "id": pid,
                "full_name": full_name,
                "default_branch": default_branch,
                "members": {},
                "statuses": [],
                "mrs": {},
            }
            return self._render_project(self._projects[pid])

    def add_member(self, full_name: str, username: str, access_level: int) -> int:
        """``access_level``: 10 guest, 15 planner, 20 reporter, 30 developer, 40 maintainer,
        50 owner. Returns the user id."""
        with self._lock:
            user_id = self.add_user(username)
            self._project(full_name)["members"][user_id] = access_level
            return user_id

    def add_merge_request(
        self,
        full_name: str,
        iid: int,
        head_sha: str,
        base_sha: str,
        source_branch: str = "feature",
        target_branch: str = "main",
        source_project_id: int | None = None,
        *,
        title: str = "A change",
        author: str = "alice",
        state: str = "opened",
    ) -> dict[str, Any]:
        """An MR with its first version; ``refs/merge-requests/<iid>/head`` is set in the bare
        repository when there is one holding ``head_sha``."""
        with self._lock:
            project = self._project(full_name)
            if iid in project["mrs"]:
                raise ValueError(f"{full_name}!{iid} exists")
            project["mrs"][iid] = {
                "id": self._next_id("mr"),
                "iid": iid,
                "title": title,
                "description": "",
                "state": state,
                "source_branch": source_branch,
                "target_branch": target_branch,
                "source_project_id": source_project_id or project["id"],
                "author_id": self.add_user(author),
                "created_at": iso(),
                "versions": [],
                "discussions": [],
            }
            self.push_merge_request(full_name, iid, head_sha, base_sha)
            return self._render_mr(project, project["mrs"][iid], detailed=True)

    def push_merge_request(
        self, full_name: str, iid: int, head_sha: str, base_sha: str | None = None
    ) -> dict[str, Any]:
        """A push to the MR's source branch: a new latest version."""
        with self._lock:
            project = self._project(full_name)
            mr = project["mrs"][iid]
            base = base_sha or mr["versions"][-1]["base_commit_sha"]
            version = {
                "id": self._next_id("version"),
                "head_commit_sha": head_sha,
                "base_commit_sha": base,
                "start_commit_sha": base,
                "created_at": iso(),
                "merge_request_id": mr["id"],
                "state": "collected",
                "real_size": "1",
            }
            mr["versions"].append(version)
            mr["updated_at"] = version["created_at"]
            self._set_mr_ref(full_name, iid, head_sha)
            return dict(version)

    def add_note(
        self, full_name: str, iid: int, body: str, *, author: str = "alice", system: bool = False
    ) -> dict[str, Any]:
        """A note by someone else on the MR (its own individual discussion)."""
        with self._lock:
            project = self._project(full_name)
            mr = project["mrs"][iid]
            note = self._new_note(project, mr, body, self.add_user(author), system=system)
            mr["discussions"].append(self._new_discussion([note], individual=True))
            return copy.deepcopy(note)

    def add_discussion(
        self,
        full_name: str,
        iid: int,
        body: str,
        *,
        author: str = "alice",
        path: str = "README.md",
        line: int = 1,
    ) -> dict[str, Any]:
        """A diff discussion by someone else, on the latest version."""
        with self._lock:
            project = self._project(full_name)
            mr = project["mrs"][iid]
            latest = mr["versions"][-1]
            position = {
                "position_type": "text",
                "base_sha": latest["base_commit_sha"],
                "start_sha": latest["start_commit_sha"],
                "head_sha": latest["head_commit_sha"],
                "old_path": path,
                "new_path": path,
                "new_line": line,
            }
            note = self._new_note(project, mr, body, self.add_user(author), position=position)
            discussion = self._new_discussion([note], individual=False)
            mr["discussions"].append(discussion)
            return copy.deepcopy(discussion)

    def resolve_discussion(
        self, full_name: str, iid: int, discussion_id: str, *, by: str = "alice"
    ) -> None:
        """A person resolves a discussion."""
        with self._lock:
            mr = self._project(full_name)["mrs"][iid]
            discussion = next(d for d in mr["discussions"] if d["id"] == discussion_id)
            self._resolve(discussion, True, self.add_user(by))

    # ------------------------------------------------------------------ faults
    def inject(
        self,
        method: str | None = None,
        path: str = r".*",
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        delay: float = 0.0,
        times: int | None = 1,
        after: bool = False,
    ) -> Fault:
        """Fail the next ``times`` API requests whose method and raw path (regex, full match,
        no query) match. ``body`` defaults to GitLab's for ``status``; with ``after`` the
        request takes effect first (a lost response)."""
        with self._lock:  # no request takes the fault before it knows ``after``
            fault = cast(
                Fault,
                super().inject(
                    method,
                    path,
                    status=status,
                    headers=headers,
                    body=body,
                    delay=delay,
                    times=times,
                ),
            )
            fault.after = after
        return fault

    def inject_rate_limit(
        self, method: str | None = None, path: str = r".*", *, retry_after: int = 1, times: int = 1
    ) -> Fault:
        """429 with GitLab's rate limit headers (``Retry-After`` and ``RateLimit-*``)."""
        reset = int(_now()) + retry_after
        return self.inject(
            method,
            path,
            status=429,
            headers={
                "retry-after": str(retry_after),
                "ratelimit-name": "throttle_authenticated_api",
                "ratelimit-limit": "60",
                "ratelimit-observed": "61",
                "ratelimit-remaining": "0",
                "ratelimit-reset": str(reset),
                "ratelimit-resettime": datetime.fromtimestamp(reset, UTC).strftime(
                    "%a, %d %b %Y %H:%M:%S GMT"
                ),
            },
            times=times,
        )

    # ------------------------------------------------------------------ observing
    def statuses(self, full_name: str, sha: str) -> list[dict[str, Any]]:
        """Commit statuses on ``sha``, oldest first, each with the ``history`` of its states."""
        with self._lock:
            project = self._project(full_name)
            return [copy.deepcopy(s) for s in project["statuses"] if s["sha"] == sha]

    def notes(self, full_name: str, iid: int) -> list[dict[str, Any]]:
        """Every note of the MR (discussion notes included), oldest first."""
        with self._lock:
            mr = self._project(full_name)["mrs"][iid]
            return [copy.deepcopy(n) for d in mr["discussions"] for n in d["notes"]]

    def discussions(self, full_name: str, iid: int) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._project(full_name)["mrs"][iid]["discussions"])

    def merge_requests(self, full_name: str) -> list[dict[str, Any]]:
        with self._lock:
            project = self._project(full_name)
            return [self._render_mr(project, mr, True) for mr in project["mrs"].values()]

    # ------------------------------------------------------------------ request pipeline
    def _pass_through(self, req: Request) -> Response | None:
        if not _GIT_PATH.fullmatch(req.path):
            return None
        if self._git is None:
            return Response(404, {"error": "404 Not Found"})
        return self._proxy_git(req)

    def _new_call(self, req: Request) -> Call:
        token = req.headers.get("private-token")
        if token is None:
            scheme, _, credential = req.headers.get("authorization", "").partition(" ")
            token = credential.strip() if scheme.lower() == "bearer" else None
        return Call(
            method=req.method,
            path=req.path,
            query=dict(req.query),
            json=None,
            body=req.body,
            headers=redacted(req.headers, "private-token"),
            token=token,
            time=_now(),
        )

    def _process(self, req: Request, call: Call) -> tuple[Response, base.Fault | None]:
        route, path_params = _route(req.method, req.path)
        path_params["_query"] = urlencode(req.query)
        if route is None:
            raise Reject(
                Response(404, {"error": "404 Not Found"}),
                "validation_errors",
                "not an endpoint the fake serves",
            )
        call.route = route
        if call.token is None or call.token != self.token:
            reason = "no PRIVATE-TOKEN or Bearer token" if call.token is None else "wrong token"
            raise Reject(Response(401, {"message": "401 Unauthorized"}), "auth_failures", reason)
        for name in _INT_PARAMS:
            if name in path_params and not path_params[name].isdigit():
                raise _bad_request(f"{name} is invalid")
        params, body = _params(req)
        call.json = body
        _validate(route, params, self._validation_errors, f"{req.method} {req.path}")
        handler = getattr(self, "_op_" + route)
        return self._with_fault(req, lambda: handler(path_params, params))

    def _answers_after(self, fault: base.Fault) -> bool:
        return isinstance(fault, Fault) and fault.after

    def _fault_body(self, status: int, headers: dict[str, str]) -> Any:
        if status == 429:
            headers.setdefault("content-type", "text/plain")
            return "Retry later\n"  # GitLab's throttle answers plain text
        return {"message": f"{status} {_phrase(status)}".strip()}

    def _git_authorize(self, header: str | None) -> bool:
        scheme, _, credential = (header or "").partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            decoded = base64.b64decode(credential.strip(), validate=True).decode()
        except ValueError:
            return False
        user, sep, secret = decoded.partition(":")
        return bool(sep and user.strip() and secret == self.token)

    def _git_request_headers(self, req: Request) -> dict[str, str]:
        forwarded = ("authorization", "content-type", "content-encoding", "git-protocol", "accept")
        return {k: req.headers[k] for k in forwarded if k in req.headers}

    # ------------------------------------------------------------------ handlers
    def _op_current_user(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        user = self._render_user(self.bot_user_id)
        return Response(200, {**user, "bot": False, "public_email": None, "locked": False})

    def _op_list_users(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        wanted = str(params.get("username", "")).lower()
        users = [
            self._render_user(uid)
            for uid, u in sorted(self._users.items())
            if not wanted or u["username"].lower() == wanted  # GitLab ignores case here
        ]
        return self._paged(path, params, users)

    def _op_post_status(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project = self._find_project(path["project"])
        sha = path["sha"]
        if not re.fullmatch(r"[0-9a-f]{7,40}", sha) or self._commit_missing(project, sha):
            raise _not_found("Commit Not Found")
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
            raise _not_found("Commit Not Found")
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
        event = _EVENTS[state]
        message = (
            f"Cannot transition status via :{event} from :{current} "
            f'(Reason(s): Status cannot transition via "{event}")'
        )
        return Reject(Response(400, {"message": message}))

    def _op_list_mrs(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project = self._find_project(path["project"])
        state = params.get("state", "all")
        mrs = [
            self._render_mr(project, mr, detailed=False)
            for mr in sorted(project["mrs"].values(), key=lambda m: -int(m["id"]))
            if state in ("all", mr["state"])
            and params.get("source_branch", mr["source_branch"]) == mr["source_branch"]
            and params.get("target_branch", mr["target_branch"]) == mr["target_branch"]
        ]
        if params.get("sort") == "asc":
            mrs.reverse()
        return self._paged(path, params, mrs)

    def _op_create_mr(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project = self._find_project(path["project"])
        source, target = str(params["source_branch"]), str(params["target_branch"])
        for mr in project["mrs"].values():
            duplicate = (
                mr["state"] == "opened"
                and mr["source_branch"] == source
                and mr["source_project_id"] == project["id"]
                and mr["target_branch"] == target
            )
            if duplicate:
                exists = "Another open merge request already exists for this source branch"
                return Response(409, {"message": [f"{exists}: !{mr['iid']}"]})
        head = self._branch_sha(project, source)
        base = self._branch_sha(project, target)
        if head is None:
            return Response(400, {"message": ["Source branch is invalid"]})
        iid = max(project["mrs"], default=0) + 1
        self.add_merge_request(
            project["full_name"], iid, head, base or head, source, target, author=self.bot_username
        )
        mr = project["mrs"][iid]
        mr["title"], mr["description"] = params["title"], params.get("description") or ""
        return Response(201, self._render_mr(project, mr, detailed=True))

    def _op_get_mr(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project, mr = self._find_mr(path)
        return Response(200, self._render_mr(project, mr, detailed=True))

    def _op_list_versions(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        _, mr = self._find_mr(path)
        return self._paged(path, params, [dict(v) for v in reversed(mr["versions"])])

    def _op_list_notes(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        _, mr = self._find_mr(path)
        notes = [n for d in mr["discussions"] for n in d["notes"]]
        key = params.get("order_by", "created_at")
        notes.sort(key=lambda n: (n[key], n["id"]), reverse=params.get("sort", "desc") == "desc")
        return self._paged(path, params, copy.deepcopy(notes))

    def _op_create_note(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project, mr = self._find_mr(path)
        note = self._new_note(project, mr, str(params["body"]), self.bot_user_id)
        mr["discussions"].append(self._new_discussion([note], individual=True))
        return Response(201, copy.deepcopy(note))

    def _op_update_note(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        _, mr = self._find_mr(path)
        note_id = int(path["note_id"])
        note = next((n for d in mr["discussions"] for n in d["notes"] if n["id"] == note_id), None)
        if note is None:
            raise _not_found("Note Not Found")
        if note["author"]["id"] != self.bot_user_id:
            return Response(403, {"message": "403 Forbidden"})
        note["body"], note["updated_at"] = str(params["body"]), iso()
        return Response(200, copy.deepcopy(note))

    def _op_list_discussions(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        _, mr = self._find_mr(path)
        return self._paged(path, params, copy.deepcopy(mr["discussions"]))

    def _op_create_discussion(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project, mr = self._find_mr(path)
        position = params.get("position")
        if position is not None:
            latest = mr["versions"][-1]
            stale = [
                f"position[{key}] {position.get(key)!r} is not the latest version's {field_}"
                for key, field_ in (
                    ("base_sha", "base_commit_sha"),
                    ("start_sha", "start_commit_sha"),
                    ("head_sha", "head_commit_sha"),
                )
                if position.get(key) != latest[field_]
            ]
            if stale:
                self._validation_errors.append(f"POST {path['_raw']}: " + "; ".join(stale))
                message = (
                    '400 Bad request - Note {:line_code=>["can\'t be blank", "must be a valid '
                    'line code"], :position=>["is incomplete"]}'
                )
                return Response(400, {"message": message})
            position = {
                "base_sha": position["base_sha"],
                "start_sha": position["start_sha"],
                "head_sha": position["head_sha"],
                "old_path": position.get("old_path") or position.get("new_path"),
                "new_path": position.get("new_path") or position.get("old_path"),
                "position_type": position["position_type"],
                "old_line": position.get("old_line"),
                "new_line": position.get("new_line"),
                "line_range": None,
            }
        note = self._new_note(
            project, mr, str(params["body"]), self.bot_user_id, position=position, resolvable=True
        )
        discussion = self._new_discussion([note], individual=False)
        mr["discussions"].append(discussion)
        return Response(201, copy.deepcopy(discussion))

    def _op_update_discussion(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        _, mr = self._find_mr(path)
        discussion = next((d for d in mr["discussions"] if d["id"] == path["discussion_id"]), None)
        if discussion is None:
            raise _not_found("Discussion Not Found")
        if not discussion["notes"][0].get("resolvable"):
            return Response(400, {"message": "400 Bad request - Discussion is not resolvable"})
        self._resolve(discussion, bool(params["resolved"]), self.bot_user_id)
        return Response(200, copy.deepcopy(discussion))

    def _op_get_member(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project = self._find_project(path["project"])
        user_id = int(path["user_id"])
        level = project["members"].get(user_id)
        if level is None:
            raise _not_found()
        member = {
            **self._render_user(user_id),
            "access_level": level,
            "created_at": iso(),
            "expires_at": None,
            "membership_state": "active",
        }
        return Response(200, member)

    # ------------------------------------------------------------------ state helpers
    def _project(self, full_name: str) -> dict[str, Any]:
        with self._lock:
            for project in self._projects.values():
                if project["full_name"] == full_name:
                    return project
        raise KeyError(f"{full_name} is not registered: call add_project() first")

    def _find_project(self, raw: str) -> dict[str, Any]:
        ident = unquote(raw)
        if ident.isdigit() and int(ident) in self._projects:
            return self._projects[int(ident)]
        for project in self._projects.values():
            if project["full_name"] == ident:
                return project
        raise _not_found("Project Not Found")

    def _find_mr(self, path: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
        project = self._find_project(path["project"])
        mr = project["mrs"].get(int(path["iid"]))
        if mr is None:
            raise _not_found()
        return project, mr

    def _new_note(
        self,
        project: dict[str, Any],
        mr: dict[str, Any],
        body: str,
        author_id: int,
        *,
        position: dict[str, Any] | None = None,
        resolvable: bool = False,
        system: bool = False,
    ) -> dict[str, Any]:
        now = iso()
        note: dict[str, Any] = {
            "id": self._next_id("note"),
            "type": "DiffNote" if position is not None else None,
            "body": body,
            "attachment": None,
            "author": self._render_user(author_id),
            "created_at": now,
            "updated_at": now,
            "system": system,
            "noteable_id": mr["id"],
            "noteable_type": "MergeRequest",
            "project_id": project["id"],
            "commit_id": None,
            "resolvable": resolvable or position is not None,
            "confidential": False,
            "internal": False,
            "noteable_iid": mr["iid"],
            "commands_changes": {},
        }
        if note["resolvable"]:
            note.update(resolved=False, resolved_by=None, resolved_at=None)
        if position is not None:
            note["position"] = dict(position)
        return note

    def _new_discussion(self, notes: list[dict[str, Any]], *, individual: bool) -> dict[str, Any]:
        digest = hashlib.sha1(f"discussion-{notes[0]['id']}".encode()).hexdigest()
        return {"id": digest, "individual_note": individual, "notes": notes}

    def _resolve(self, discussion: dict[str, Any], resolved: bool, by: int) -> None:
        for note in discussion["notes"]:
            if note.get("resolvable"):
                note["resolved"] = resolved
                note["resolved_by"] = self._render_user(by) if resolved else None
                note["resolved_at"] = iso() if resolved else None

    def _commit_missing(self, project: dict[str, Any], sha: str) -> bool:
        # no repository to ask (None): any well-formed sha is taken
        return self._has_commit(project["full_name"], sha) is False

    def _branch_sha(self, project: dict[str, Any], branch: str) -> str | None:
        return self._rev_parse(project["full_name"], f"refs/heads/{branch}^{{commit}}") or None

    def _set_mr_ref(self, full_name: str, iid: int, sha: str) -> None:
        bare = self._bare_repo(full_name)
        if bare is not None and not self._commit_missing(self._project(full_name), sha):
            run_git("--git-dir", str(bare), "update-ref", f"refs/merge-requests/{iid}/head", sha)

    # ------------------------------------------------------------------ rendering
    def _render_user(self, user_id: int) -> dict[str, Any]:
        user = self._users[user_id]
        return {
            "id": user_id,
            "username": user["username"],
            "name": user["name"],
            "state": user["state"],
            "locked": False,
            "avatar_url": f"{self.url}/uploads/-/system/user/avatar/{user_id}/avatar.png",
            "web_url": f"{self.url}/{quote(user['username'])}",
        }

    def _render_project(self, project: dict[str, Any]) -> dict[str, Any]:
        full = project["full_name"]
        namespace, _, name = full.rpartition("/")
        web = f"{self.url}/{full}"
        host = urlsplit(self.url).netloc
        return {
            "id": project["id"],
            "name": name,
            "description": None,
            "web_url": web,
            "avatar_url": None,
            "git_ssh_url": f"git@{host}:{full}.git",
            "git_http_url": f"{web}.git",
            "namespace": namespace,
            "visibility_level": 0,
            "path_with_namespace": full,
            "default_branch": project["default_branch"],
            "ci_config_path": "",
            "homepage": web,
            "url": f"git@{host}:{full}.git",
            "ssh_url": f"git@{host}:{full}.git",
            "http_url": f"{web}.git",
        }

    def _render_mr(
        self, project: dict[str, Any], mr: dict[str, Any], detailed: bool
    ) -> dict[str, Any]:
        latest = mr["versions"][-1]
        full = project["full_name"]
        item: dict[str, Any] = {
            "id": mr["id"],
            "iid": mr["iid"],
            "project_id": project["id"],
            "title": mr["title"],
            "description": mr["description"],
            "state": mr["state"],
            "created_at": mr["created_at"],
            "updated_at": mr.get("updated_at", mr["created_at"]),
            "merged_by": None,
            "merged_at": None,
            "closed_at": None,
            "target_branch": mr["target_branch"],
            "source_branch": mr["source_branch"],
            "user_notes_count": sum(len(d["notes"]) for d in mr["discussions"]),
            "author": self._render_user(mr["author_id"]),
            "assignees": [],
            "reviewers": [],
            "source_project_id": mr["source_project_id"],
            "target_project_id": project["id"],
            "labels": [],
            "draft": False,
            "work_in_progress": False,
            "merge_when_pipeline_succeeds": False,
            "merge_status": "can_be_merged",
            "detailed_merge_status": "mergeable",
            "sha": latest["head_commit_sha"],
            "merge_commit_sha": None,
            "squash_commit_sha": None,
            "references": {
                "short": f"!{mr['iid']}",
                "relative": f"!{mr['iid']}",
                "full": f"{full}!{mr['iid']}",
            },
            "web_url": f"{self.url}/{full}/-/merge_requests/{mr['iid']}",
            "has_conflicts": False,
            "blocking_discussions_resolved": True,
        }
        if detailed:  # only a single merge request's answer carries its diff refs
            item["diff_refs"] = {
                "base_sha": latest["base_commit_sha"],
                "head_sha": latest["head_commit_sha"],
                "start_sha": latest["start_commit_sha"],
            }
        return item

    def _paged(self, path: dict[str, str], params: dict[str, Any], items: list[Any]) -> Response:
        """GitLab's offset pagination: Link plus the X-Page family of headers."""
        per_page = max(1, min(100, int(params.get("per_page") or 20)))
        page = max(1, int(params.get("page") or 1))
        pages = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        query = dict(parse_qsl(path["_query"], keep_blank_values=True))

        def link(n: int) -> str:
            values = {**query, "per_page": str(per_page), "page": str(n)}
            return f"<{self.url}{path['_raw']}?{urlencode(values)}>"

        rels = []
        if page > 1:
            rels.append(f'{link(page - 1)}; rel="prev"')
        if page < pages:
            rels.append(f'{link(page + 1)}; rel="next"')
        rels += [f'{link(1)}; rel="first"', f'{link(pages)}; rel="last"']
        headers = {
            "link": ", ".join(rels),
            "x-page": str(page),
            "x-per-page": str(per_page),
            "x-total": str(len(items)),
            "x-total-pages": str(pages),
            "x-next-page": str(page + 1) if page < pages else "",
            "x-prev-page": str(page - 1) if page > 1 else "",
        }
        return Response(200, chunk, headers)


def _route(method: str, raw_path: str) -> tuple[str | None, dict[str, str]]:
    for name, route_method, pattern in _COMPILED:
        match = pattern.fullmatch(raw_path)
        if match and route_method == method:
            return name, {**match.groupdict(), "_raw": raw_path}
    return None, {}


def _params(req: Request) -> tuple[dict[str, Any], Any]:
    """Query and body parameters merged (GitLab reads both); the body as sent, for the call."""
    params: dict[str, Any] = dict(req.query)
    if not req.body.strip():
        return params, None
    content_type = req.headers.get("content-type", "")
    if "json" in content_type:
        try:
            body = json.loads(req.body)
        except ValueError:
            raise _bad_request("body is not valid JSON") from None
        if not isinstance(body, dict):
            raise _bad_request("body is not a JSON object")
        return {**params, **body}, body
    pairs = parse_qsl(req.body.decode("utf-8", "replace"), keep_blank_values=True)
    position = {k[9:-1]: v for k, v in pairs if k.startswith("position[")}
    form: dict[str, Any] = {k: v for k, v in pairs if not k.startswith("position[")}
    if position:
        form["position"] = position
    return {**params, **form}, form


def _validate(route: str, params: dict[str, Any], record: list[str], where: str) -> None:
    """GitLab's parameter checks for ``route`` (400 on the first failure)."""
    rules = ROUTES[route][2]
    for name, rule in rules.items():
        if isinstance(rule, tuple):
            required, allowed, kind = rule[:1] == ("!",), rule, "enum"
            allowed = rule[1:] if required else rule
        else:
            required, allowed, kind = rule.startswith("!"), (), rule.lstrip("!")
        if name not in params:
            if required:
                raise _bad_request(f"{name} is missing")
            continue
        value = params[name]
        if kind == "enum" and value not in allowed:
            raise _bad_request(f"{name} does not have a valid value")
        checks: dict[str, Callable[[Any], bool]] = {
            "int": _is_int,
            "float": _is_float,
            "bool": lambda v: _bool(v) is not None,
            "str": lambda v: isinstance(v, str),
        }
        if kind in checks and not checks[kind](value):
            raise _bad_request(f"{name} is invalid")
        if kind == "position":
            _check_position(value)
        if kind == "bool":
            params[name] = _bool(value)
    for name in params:
        if name not in rules:
            record.append(f"{where}: undocumented parameter {name!r} (GitLab ignores it)")
    _check_lengths(route, params)


def _check_lengths(route: str, params: dict[str, Any]) -> None:
    if route == "post_status":
        if len(str(params.get("description") or "")) > DESCRIPTION_LIMIT:
            raise _bad_request("description is too long (maximum is 255 characters)", key="message")
        target = params.get("target_url")
        if target is not None and urlsplit(str(target)).scheme not in ("http", "https"):
            raise _bad_request("target_url is blocked: Only allowed schemes are http, https")
    if route in ("create_note", "update_note", "create_discussion"):
        if not str(params["body"]).strip():
            raise _bad_request("body is empty")
        if len(str(params["body"])) > NOTE_LIMIT:
            raise _bad_request("Note is too long (maximum is 1000000 characters)", key="message")
    if route == "create_mr" and len(str(params.get("description") or "")) > MR_DESCRIPTION_LIMIT:
        raise _bad_request("description is too long", key="message")


def _check_position(position: Any) -> None:
    if not isinstance(position, dict):
        raise _bad_request("position is invalid")
    for key in ("base_sha", "start_sha", "head_sha", "position_type"):
        if not position.get(key):
            raise _bad_request(f"position[{key}] is missing")
    if position["position_type"] not in POSITION_TYPES:
        raise _bad_request("position[position_type] does not have a valid value")
    if position["position_type"] != "text":
        return
    if not (position.get("new_path") or position.get("old_path")):
        raise _bad_request("position[new_path], position[old_path] are missing, at least one")
    lines = [position.get(k) for k in ("new_line", "old_line") if position.get(k) is not None]
    if not lines:
        raise _bad_request("position[new_line], position[old_line] are missing, at least one")
    if not all(_is_int(v) and int(str(v)) >= 1 for v in lines):
        raise _bad_request("position[new_line] is invalid")


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and value.isdigit())


def _is_float(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return not isinstance(value, bool)


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    return {"true": True, "false": False}.get(str(value).lower())


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""
