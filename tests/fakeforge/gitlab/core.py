"""The fake GitLab's state and request pipeline, which every concern of the package extends:
users, projects and their merge requests, how a request is routed, checked and dispatched to
its ``_op_<route>`` handler, GitLab's offset paging, and the note and discussion records."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode

from tests.fakeforge import base
from tests.fakeforge.base import FakeForgeBase, Reject
from tests.fakeforge.gitlab.records import Call, Fault, iso
from tests.fakeforge.gitlab.routes import (
    INT_PARAMS,
    bad_request,
    not_found,
    params_of,
    route,
    validate,
)
from tests.fakeforge.httpserver import Request, Response

# The users GitLab makes for project and group access tokens (older releases: ``_bot`` then
# a number; since 16: ``_bot_`` and a random hex).
TOKEN_USER = re.compile(r"(?:project|group)_\d+_bot(?:\d*|_[0-9a-f]+)")


class GitLabCore(FakeForgeBase[Call]):
    """What every part of :class:`tests.fakeforge.gitlab.FakeGitLab` reads and writes."""

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
        self._groups: dict[int, dict[str, Any]] = {}  # see Groups
        self._before_push: list[Callable[[], None]] = []  # see Repositories.before_push
        self.bot_user_id = self.add_user(bot_username, name="Ichor Bot")

    # ------------------------------------------------------------------ users
    def add_user(self, username: str, *, name: str | None = None, bot: bool | None = None) -> int:
        """A user (the existing one of that name, if any). ``bot`` defaults to whether the name
        is one GitLab gives a project's or group's access token (``project_<id>_bot_<hash>``)."""
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
                "bot": bool(TOKEN_USER.fullmatch(username)) if bot is None else bot,
            }
            return user_id

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

    # ------------------------------------------------------------------ request pipeline
    def _process(self, req: Request, call: Call) -> tuple[Response, base.Fault | None]:
        name, path_params = route(req.method, req.path)
        path_params["_query"] = urlencode(req.query)
        if name is None:
            raise Reject(
                Response(404, {"error": "404 Not Found"}),
                "validation_errors",
                "not an endpoint the fake serves",
            )
        call.route = name
        if call.token is None or call.token != self.token:
            reason = "no PRIVATE-TOKEN or Bearer token" if call.token is None else "wrong token"
            raise Reject(Response(401, {"message": "401 Unauthorized"}), "auth_failures", reason)
        for param in INT_PARAMS:
            if param in path_params and not path_params[param].isdigit():
                raise bad_request(f"{param} is invalid")
        params, body = params_of(req)
        call.json = body
        validate(name, params, self._validation_errors, f"{req.method} {req.path}")
        handler = getattr(self, "_op_" + name)
        return self._with_fault(req, lambda: handler(path_params, params))

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
        raise not_found("Project Not Found")

    def _find_mr(self, path: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
        project = self._find_project(path["project"])
        mr = project["mrs"].get(int(path["iid"]))
        if mr is None:
            raise not_found()
        return project, mr

    def _commit_missing(self, project: dict[str, Any], sha: str) -> bool:
        # no repository to ask (None): any well-formed sha is taken
        return self._has_commit(project["full_name"], sha) is False

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

    # ------------------------------------------------------------------ paging
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
