"""Repositories, branches and who may do what: set-up, and the permission endpoint."""

from __future__ import annotations

from tests.fakeforge.base import Reject
from tests.fakeforge.gitea.state import Ctx, GiteaState, Repo, error
from tests.fakeforge.httpserver import Response

PERMISSIONS = ("owner", "admin", "write", "read", "none")
FORBIDDEN_PERMISSION = (
    "Only admins can query all permissions, repo admins can query all repo permissions, "
    "collaborators can query only their own"
)


class Repositories(GiteaState):
    def add_repo(
        self, full_name: str, *, private: bool = True, default_branch: str = "main"
    ) -> None:
        owner, _, name = full_name.partition("/")
        if not owner or not name or "/" in name:
            raise ValueError(f"owner/name expected, got {full_name!r}")
        with self._lock:
            self._user_id(owner)
            repo = Repo(full_name, self._next_id("repo"), private, default_branch)
            repo.roles[self.bot_login] = "admin"
            self._repos[full_name] = repo
            self._pulls.setdefault(full_name, {})

    def set_permission(self, full_name: str, user: str, permission: str) -> None:
        """``permission``: owner, admin, write, read or none. The token's user
        (:attr:`bot_login`) is an admin by default; below that, the permission endpoint
        answers 403 for anyone else, as Gitea does."""
        if permission not in PERMISSIONS:
            raise ValueError(f"permission must be one of {PERMISSIONS}")
        with self._lock:
            self._user_id(user)
            self._repo(full_name).roles[user] = permission

    def forbid_permission_reads(self, full_name: str) -> None:
        """The token's user is no repository admin: reading others' permissions is a 403."""
        self.set_permission(full_name, self.bot_login, "write")

    def set_branch(self, full_name: str, branch: str, sha: str) -> None:
        """A branch head for pull creation when no bare repository says it."""
        with self._lock:
            self._repo(full_name).branches[branch] = sha

    def _op_repoGet(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        return Response(200, self._render_repo(ctx.repo.full_name))

    def _op_userCurrentListRepos(self, ctx: Ctx) -> Response:
        """``GET /user/repos``: the repositories the token's user has a role on, by id, each
        with what that role allows."""
        mine = sorted(
            (r for r in self._repos.values() if r.roles.get(self.bot_login, "none") != "none"),
            key=lambda r: r.id,
        )
        items, headers = self._page(ctx.req, mine)
        return Response(200, [self._listed_repo(r) for r in items], headers)

    def _listed_repo(self, repo: Repo) -> dict[str, object]:
        role = repo.roles.get(self.bot_login, "none")
        permissions = {
            "admin": role in ("owner", "admin"),
            "push": role in ("owner", "admin", "write"),
            "pull": role != "none",
        }
        return {**self._render_repo(repo.full_name), "permissions": permissions, "archived": False}

    def _op_repoGetRepoPermissions(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        who = ctx.params["collaborator"]
        if who != self.bot_login and ctx.repo.roles.get(self.bot_login) not in ("admin", "owner"):
            raise Reject(error(403, FORBIDDEN_PERMISSION))
        if who not in self._users:
            raise Reject(error(404, f"user redirect does not exist [name: {who}]"))
        default = (
            "owner"
            if who == ctx.repo.full_name.partition("/")[0]
            else ("none" if ctx.repo.private else "read")
        )
        role = ctx.repo.roles.get(who, default)
        body = {"permission": role, "role_name": role, "user": self._render_user(who)}
        return Response(200, body)
