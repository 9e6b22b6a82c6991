"""Tokens, users and members of the fake GitLab: the credentials a request carries, the
token's own user (``GET /user``), users by name, and a member's access level."""

from __future__ import annotations

import base64
from typing import Any

from tests.fakeforge.base import redacted
from tests.fakeforge.gitlab.core import GitLabCore
from tests.fakeforge.gitlab.records import Call, iso, now
from tests.fakeforge.gitlab.routes import not_found
from tests.fakeforge.httpserver import Request, Response


class Auth(GitLabCore):
    # ------------------------------------------------------------------ lifecycle
    def env(self) -> dict[str, str]:
        """The instance URL (the API is under ``/api/v4``, git on the same origin) and token."""
        return {"ICHOR_GITLAB_URL": self.url, "ICHOR_GITLAB_TOKEN": self.token}

    def basic_auth_header(self, token: str | None = None, user: str = "oauth2") -> str:
        raw = base64.b64encode(f"{user}:{token or self.token}".encode()).decode()
        return f"Authorization: Basic {raw}"

    # ------------------------------------------------------------------ test set-up
    def add_member(self, full_name: str, username: str, access_level: int) -> int:
        """``access_level``: 10 guest, 15 planner, 20 reporter, 30 developer, 40 maintainer,
        50 owner. Returns the user id."""
        with self._lock:
            user_id = self.add_user(username)
            self._project(full_name)["members"][user_id] = access_level
            return user_id

    # ------------------------------------------------------------------ request pipeline
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
            time=now(),
        )

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

    def _op_get_member(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project = self._find_project(path["project"])
        user_id = int(path["user_id"])
        level = project["members"].get(user_id)
        if level is None:
            raise not_found()
        member = {
            **self._render_user(user_id),
            "access_level": level,
            "created_at": iso(),
            "expires_at": None,
            "membership_state": "active",
        }
        return Response(200, member)
