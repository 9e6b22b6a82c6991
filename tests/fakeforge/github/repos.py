"""Repositories on the fake GitHub: installations and repositories a test registers, branch
heads, collaborators' roles, and the repository and permission endpoints."""

from __future__ import annotations

from collections.abc import Mapping

from tests.fakeforge.github.core import GitHubCore
from tests.fakeforge.github.model import DEFAULT_INSTALLATION_PERMISSIONS, Ctx, Installation, Repo
from tests.fakeforge.httpserver import Response
from tests.fakeforge.openapi import overlay

ROLES = ("admin", "maintain", "write", "triage", "read", "none")
# The legacy ``permission`` field folds maintain into write and triage into read.
_LEGACY_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
    "none": "none",
}


class ReposMixin(GitHubCore):
    def add_installation(
        self, installation_id: int, account: str, permissions: Mapping[str, str] | None = None
    ) -> None:
        with self._lock:
            perms = dict(DEFAULT_INSTALLATION_PERMISSIONS if permissions is None else permissions)
            inst = self._installations.get(installation_id)
            if inst is None:
                self._installations[installation_id] = Installation(installation_id, account, perms)
            elif permissions is not None:
                inst.permissions = perms

    def repo_id(self, full_name: str) -> int:
        """The repository's id, as GitHub's answers name it."""
        return self._repo(full_name).id

    def add_repo(
        self,
        full_name: str,
        installation_id: int = 42,
        *,
        private: bool = True,
        default_branch: str = "main",
        permissions: Mapping[str, str] | None = None,
    ) -> None:
        """Register a repository (API state only; the test makes the bare repository at
        ``git_root/<owner>/<name>.git``). ``permissions`` are the installation's."""
        owner, _, name = full_name.partition("/")
        if not owner or not name or "/" in name:
            raise ValueError(f"owner/name expected, got {full_name!r}")
        with self._lock:
            self.add_installation(installation_id, owner, permissions)
            self._repos[full_name] = Repo(
                full_name=full_name,
                id=self._stable_id(full_name),
                installation_id=installation_id,
                private=private,
                default_branch=default_branch,
            )
            self._pulls.setdefault(full_name, {})
            self._issues.setdefault(full_name, {})

    def set_permission(self, full_name: str, username: str, role: str) -> None:
        """``role``: admin, maintain, write, triage, read or none. Users never set get
        ``none`` on a private repository and ``read`` on a public one."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}")
        with self._lock:
            self._repo(full_name).roles[username] = role

    def mark_bot(self, login: str) -> None:
        """GitHub types ``login`` a ``Bot`` from now on (a ``…[bot]`` login always is one)."""
        with self._lock:
            self._bots.add(login)

    def set_branch(self, full_name: str, branch: str, sha: str) -> None:
        """A branch head for PR creation when there is no bare repository to read it from."""
        with self._lock:
            self._repo(full_name).branches[branch] = sha

    def branch_sha(self, full_name: str, branch: str) -> str | None:
        """The branch head as the fake sees it (set_branch(), else the bare repository);
        None when unknown."""
        with self._lock:
            return self._branch_sha(full_name, branch) or None

    # ------------------------------------------------------------------ endpoints
    def _op_repos_get(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        return Response(200, self._repo_object(ctx.repo.full_name, "full-repository"))

    def _op_repos_get_collaborator_permission_level(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        user = ctx.params["username"]
        role = ctx.repo.roles.get(user, "none" if ctx.repo.private else "read")
        return Response(
            200,
            {
                "permission": _LEGACY_PERMISSION[role],
                "role_name": role,
                "user": overlay(
                    self._user(user),
                    {"permissions": _permission_flags(role), "role_name": role},
                ),
            },
        )


def _permission_flags(role: str) -> dict[str, bool]:
    rank = {"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}[role]
    return {
        "pull": rank >= 1,
        "triage": rank >= 2,
        "push": rank >= 3,
        "maintain": rank >= 4,
        "admin": rank >= 5,
    }
