"""The request pipeline's Gitea answers (routes, 401, 404, 422, 501) and the credentials it
takes: the API's token (``token`` or ``Bearer``) and git's Basic forms of it."""

from __future__ import annotations

import base64
import re
import secrets
from typing import Any

from tests.fakeforge.base import Reject, redacted, split_auth
from tests.fakeforge.gitea.state import API_PREFIX, Call, Ctx, GiteaState, Repo, error
from tests.fakeforge.httpserver import Request, Response
from tests.fakeforge.openapi import Operation, Problem, RouteError, join_problems

_GIT_PATH = re.compile(r"/[^/]+/[^/]+\.git(/.*)?")


class Auth(GiteaState):
    """How the fake takes credentials and answers what its pipeline refuses."""

    # ------------------------------------------------------------------ credentials
    def env(self) -> dict[str, str]:
        """The instance URL (the API is below ``/api/v1``, git on the same origin), token."""
        return {"ICHOR_GITEA_URL": self.url, "ICHOR_GITEA_TOKEN": self.token}

    def basic_auth_header(self) -> str:
        """``Authorization: Basic ...`` with the token as username, for a test's own git."""
        raw = base64.b64encode(f"{self.token}:x-oauth-basic".encode()).decode()
        return f"Authorization: Basic {raw}"

    # ------------------------------------------------------------------ request pipeline
    def _pass_through(self, req: Request) -> Response | None:
        if _GIT_PATH.fullmatch(req.path) and self._git is not None:
            return self._proxy_git(req)
        return None

    def _new_call(self, req: Request) -> Call:
        scheme, _ = split_auth(req.headers.get("authorization"))
        return Call(req.method, req.path, dict(req.query), None, redacted(req.headers), scheme)

    def _call_error(self, line: str, message: str) -> str:
        return message  # the call has its method and path

    def _match(self, req: Request) -> tuple[Operation, dict[str, str]]:
        if not req.path.startswith(API_PREFIX + "/"):
            raise RouteError("not an API path")
        return self.api.match(req.method, req.path[len(API_PREFIX) :])

    def _context(
        self, req: Request, op: Operation, params: dict[str, str], body: Any, auth: None
    ) -> Ctx:
        return Ctx(req, op, params, body, None)

    def _authorize_repo(self, ctx: Ctx) -> Repo | None:
        if "owner" not in ctx.params or "repo" not in ctx.params:
            return None
        repo = self._repos.get(f"{ctx.params['owner']}/{ctx.params['repo']}")
        if repo is None:
            raise Reject(error(404, "The target couldn't be found."))
        return repo

    def _not_found(self) -> Response:
        return error(404, "Not Found")

    def _invalid(self, op: Operation, problems: list[Problem]) -> Response:
        return error(422, join_problems(problems))

    def _unserved(self, op: Operation) -> Response:
        return error(501, f"the fake does not serve {op.method} {op.template}")

    def _authenticate(self, op: Operation, req: Request, call: Call) -> None:
        scheme, credential = split_auth(req.headers.get("authorization"))

        def fail(message: str, reason: str) -> Reject:
            return Reject(error(401, message), "auth_failures", reason)

        if credential is None:
            raise fail("token is required", "no Authorization header")
        if scheme is None or scheme.lower() not in {"token", "bearer"}:
            raise fail("invalid token", f"unsupported Authorization scheme {scheme!r}")
        if not secrets.compare_digest(credential.encode(), self.token.encode()):
            raise fail("invalid token", "unknown token")

    # ------------------------------------------------------------------ git
    def _git_authorize(self, header: str | None) -> bool:
        """Gitea's Basic method: the token as username (password empty or "x-oauth-basic"),
        else as password."""
        scheme, credential = split_auth(header)
        if scheme is None or credential is None or scheme.lower() != "basic":
            return False
        try:
            decoded = base64.b64decode(credential, validate=True).decode()
        except ValueError:
            return False
        user, _, password = decoded.partition(":")
        token = user if password in ("", "x-oauth-basic") else password
        return secrets.compare_digest(token.encode(), self.token.encode())

    def _op_userGetCurrent(self, ctx: Ctx) -> Response:
        return Response(200, self._render_user(self.bot_login))
