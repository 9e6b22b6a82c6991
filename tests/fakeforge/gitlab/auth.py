"""Tokens, users and members of the fake GitLab: the credentials a request carries, the
token's own user (``GET /user``), users by name, and a member's access level."""

from __future__ import annotations

import base64
import secrets
from typing import Any

from tests.fakeforge import base
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

    def add_token_user(self, full_name: str, *, group: bool = False, access_level: int = 40) -> str:
        """The bot user of a new project (or group) access token, a member of ``full_name``:
        its username, ``project_<id>_bot_<hash>`` as GitLab names it."""
        with self._lock:
            project = self._project(full_name)
            owner = f"group_{project['id'] + 100}" if group else f"project_{project['id']}"
            username = f"{owner}_bot_{secrets.token_hex(16)}"
            self.add_member(full_name, username, access_level)
            return username

    def fail_member_lookups(
        self, status: int, *, times: int | None = None, body: Any = None
    ) -> base.Fault:
        """Answer ``status`` to ``GET .../members/all/:user_id`` (``times=None``: always)."""
        path = r"/api/v4/projects/[^/]+/members/all/[^/]+"
        return self.inject("GET", path, status=status, times=times, body=body)

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
        bot = self._users[self.bot_user_id]["bot"]  # only GET /user's answer says (UserBasic not)
        return Response(200, {**user, "bot": bot, "public_email": None, "locked": False})

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
