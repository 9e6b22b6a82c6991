"""Projects of the fake GitLab and git on the API's origin: ``/<full_name>.git/...`` is passed
to :class:`tests.support.git_http.GitHttpServer`, which takes ``Authorization: Basic`` with any
non-blank user name and the token as password, as GitLab does for access tokens (fetches and
pushes alike). A push can be raced: :meth:`Repositories.before_push` runs a callback (someone
moving the branch) just before the next ``git-receive-pack`` is served."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from tests.fakeforge.base import run_git
from tests.fakeforge.gitlab.core import GitLabCore
from tests.fakeforge.gitlab.records import iso
from tests.fakeforge.gitlab.routes import GIT_PATH
from tests.fakeforge.httpserver import Request, Response


class Repositories(GitLabCore):
    # ------------------------------------------------------------------ test set-up
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

    def archive_project(self, full_name: str) -> None:
        with self._lock:
            self._project(full_name)["archived"] = True

    def set_branch(self, full_name: str, branch: str, sha: str) -> None:
        """Someone pushes ``refs/heads/<branch>`` to ``sha`` (or makes it)."""
        bare = self._bare_repo(full_name)
        if bare is None:
            raise KeyError(f"{full_name} has no repository: call make_bare_repo() first")
        run_git("--git-dir", str(bare), "update-ref", f"refs/heads/{branch}", sha)

    def before_push(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` just before the next push (``POST .../git-receive-pack``) reaches
        git: what another writer does between the bot reading a branch and its push landing.
        Callbacks queue up, one per push."""
        with self._lock:
            self._before_push.append(callback)

    # ------------------------------------------------------------------ git
    def _pass_through(self, req: Request) -> Response | None:
        if not GIT_PATH.fullmatch(req.path):
            return None
        if self._git is None:
            return Response(404, {"error": "404 Not Found"})
        if req.method == "POST" and req.path.endswith("/git-receive-pack"):
            with self._lock:
                racer = self._before_push.pop(0) if self._before_push else None
            if racer is not None:
                racer()
        return self._proxy_git(req)

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

    def _branch_sha(self, project: dict[str, Any], branch: str) -> str | None:
        return self._rev_parse(project["full_name"], f"refs/heads/{branch}^{{commit}}") or None

    def _set_mr_ref(self, full_name: str, iid: int, sha: str) -> None:
        bare = self._bare_repo(full_name)
        if bare is not None and not self._commit_missing(self._project(full_name), sha):
            run_git("--git-dir", str(bare), "update-ref", f"refs/merge-requests/{iid}/head", sha)

    # ------------------------------------------------------------------ handlers
    def _op_get_project(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        """``GET /projects/:id`` (by id or URL-encoded path), the fields of GitLab's answer
        that describe where the project lives."""
        return Response(200, self._describe(self._find_project(path["project"])))

    def _op_list_projects(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        """``GET /projects``: with ``membership``, those the token's user is a member of (the
        fake's token reaches every project as a Maintainer unless a test set its access), at
        least ``min_access_level``; archived ones only when asked for."""
        least = int(params.get("min_access_level") or 0)
        found = [
            self._describe(p)
            for p in sorted(self._projects.values(), key=lambda p: -int(p["id"]))
            if p["members"].get(self.bot_user_id, 40) >= least
            and bool(params.get("archived", False)) == p.get("archived", False)
        ]
        return self._paged(path, params, found)

    def _describe(self, project: dict[str, Any]) -> dict[str, Any]:
        full = project["full_name"]
        web = f"{self.url}/{full}"
        host = urlsplit(self.url).netloc
        return {
            "id": project["id"],
            "name": full.rpartition("/")[2],
            "path": full.rpartition("/")[2],
            "path_with_namespace": full,
            "default_branch": project["default_branch"],
            "visibility": "private",
            "web_url": web,
            "http_url_to_repo": f"{web}.git",
            "ssh_url_to_repo": f"git@{host}:{full}.git",
            "archived": project.get("archived", False),
            "last_activity_at": iso(),
        }

    # ------------------------------------------------------------------ rendering
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
