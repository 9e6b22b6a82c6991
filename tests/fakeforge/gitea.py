"""A fake Gitea or Forgejo (REST API under ``/api/v1`` + git over smart HTTP, one origin).

Every API request is checked against the recorded Swagger 2.0 description of its flavor
(Gitea 1.27.1 or Forgejo 16.0.1, recorded in ``shared/forge-data/gitea/swagger`` and trimmed
to what the fake serves under ``fixtures/forge-api``) and
answered the way Gitea answers a bad one; each departure is also recorded in
:attr:`FakeGitea.validation_errors`.

Pipeline for one API request (first failure answers):

1. route: method + path (below ``/api/v1``) must be an operation of the description → else 404;
   integer path parameters must be integers → else 404 (both recorded)
2. credentials: ``Authorization: token <t>`` (or ``Bearer <t>``) with the configured token →
   else 401 (``auth_failures``)
3. query parameters (declared ones: type, enum), then the JSON body: schema (``$ref`` into
   ``#/definitions``, required, enum, type, additionalProperties when set), then rules Gitea
   enforces that the schema cannot say (a COMMENT review needs a body or a comment; a review
   comment needs a path and a line) → 422 with Gitea's ``{message, url}`` (recorded)
4. an injected fault that matches (``inject``): its status/headers/body; a fault without a
   status only delays the (already applied) answer
5. the repository must be registered → else 404
6. the operation's handler; one the fake does not serve → 501 (``unimplemented``). 2xx answers
   are checked against the description's response schema with every object closed
   (``additionalProperties: false``), so the fake cannot invent fields the flavor lacks
   (``response_errors``: a bug in the fake).

Forgejo's description gives ``CommitStatusState`` as a plain string whose allowed values are
stated in its description only; the fake enforces those values as an enum (as Gitea's
description does), so a bad ``state`` is a 422 on both flavors.

Git: ``/<owner>/<name>.git/...`` on the same origin is passed to
:class:`tests.support.git_http.GitHttpServer` (``git`` has its ``requests`` and ``fail_next``);
it accepts what Gitea's Basic method accepts for a token: the token as username with an empty
or ``x-oauth-basic`` password, or as password. Git requests are not in :attr:`calls`.
"""

from __future__ import annotations

import base64
import copy
import functools
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from jsonschema import Draft4Validator

from tests.fakeforge.base import (
    DescribedCall,
    DescribedForge,
    Fault,
    Reject,
    link_header,
    redacted,
    split_auth,
)
from tests.fakeforge.httpserver import Request, Response
from tests.fakeforge.openapi import (
    OpenApi,
    Operation,
    Problem,
    RouteError,
    join_problems,
)

T = TypeVar("T")
Flavor = Literal["gitea", "forgejo"]

# The recorded descriptions trimmed to what this fake serves (scripts/trim_api_descriptions.py).
API_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures/forge-api"
DESCRIPTIONS: dict[str, Path] = {
    "gitea": API_FIXTURES / "gitea-1.27.1.json",
    "forgejo": API_FIXTURES / "forgejo-16.0.1.json",
}
API_PREFIX = "/api/v1"
PERMISSIONS = ("owner", "admin", "write", "read", "none")
_PARAM_KEYS = ("type", "format", "enum", "items", "minimum", "maximum", "pattern", "maxLength")
_PROSE_ENUMS = ("CommitStatusState",)  # definitions whose values only their description lists
_GIT_PATH = re.compile(r"/[^/]+/[^/]+\.git(/.*)?")
_DEFAULT_LIMIT = 30  # Gitea's DEFAULT_PAGING_NUM
_MAX_LIMIT = 50  # Gitea's MAX_RESPONSE_ITEMS
_FORBIDDEN_PERMISSION = (
    "Only admins can query all permissions, repo admins can query all repo permissions, "
    "collaborators can query only their own"
)


# ---------------------------------------------------------------------------- Swagger 2.0


class Swagger2(OpenApi):
    """A Swagger 2.0 description behind :class:`OpenApi`'s matching and validation.

    Differences from OpenAPI 3 handled here: a body is a parameter ``in: body`` with a
    ``schema``; other parameters carry their type inline; ``$ref``s point at ``#/definitions``,
    ``#/parameters`` and ``#/responses``; paths are below ``basePath``.
    """

    greedy_params = frozenset()  # Gitea's templates have none

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.base_path: str = self.document.get("basePath", "")
        self.definitions = _with_prose_enums(copy.deepcopy(self.document.get("definitions", {})))
        self._closed_definitions = _closed(self.definitions)

    def _schema_root(self) -> dict[str, Any]:
        return {"definitions": self.definitions}

    def _param_schema(self, param: Mapping[str, Any]) -> Mapping[str, Any]:
        return {k: param[k] for k in _PARAM_KEYS if k in param}  # inline, as JSON Schema

    def response_schema(self, op: Operation, status: int) -> Mapping[str, Any] | None:
        response = op.responses.get(str(status))
        if response is None:
            return None
        schema = self._deref(response).get("schema")
        return schema if isinstance(schema, dict) else None

    def _check_response_body(self, schema: Mapping[str, Any], body: Any) -> list[Problem]:
        """Every object closed: the fake cannot invent fields the flavor lacks."""
        root = {"definitions": self._closed_definitions, "allOf": [schema]}
        validator = Draft4Validator(root, format_checker=self._format_checker)
        return [Problem("", "invalid", e.message[:200]) for e in validator.iter_errors(body)]


def _with_prose_enums(definitions: dict[str, Any]) -> dict[str, Any]:
    for name in _PROSE_ENUMS:
        schema = definitions.get(name)
        if isinstance(schema, dict) and "enum" not in schema:
            values = re.findall(r'"([a-z_]+)"', schema.get("description", ""))
            if values:
                schema["enum"] = values
    return definitions


def _closed(definitions: dict[str, Any]) -> dict[str, Any]:
    def close(node: Any) -> Any:
        if isinstance(node, list):
            return [close(x) for x in node]
        if not isinstance(node, dict):
            return node
        out = {k: close(v) for k, v in node.items()}
        if "properties" in node and "additionalProperties" not in node:
            out["additionalProperties"] = False
        return out

    return {name: close(schema) for name, schema in definitions.items()}


@functools.cache
def load(flavor: str) -> Swagger2:
    """The parsed description of ``flavor``, shared by every fake in the process."""
    return Swagger2(DESCRIPTIONS[flavor])


# ---------------------------------------------------------------------------- records


def iso(ts: float | None = None) -> str:
    return datetime.fromtimestamp(int(time.time() if ts is None else ts), UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


@dataclass
class Call(DescribedCall):
    """One API request the fake answered (Authorization cut to its scheme in ``headers``)."""

    method: str
    path: str
    query: dict[str, str]
    json: Any
    headers: dict[str, str]
    auth_scheme: str | None
    status: int = 0
    response: Any = None
    template: str | None = None
    operation_id: str | None = None
    errors: list[str] = field(default_factory=list)
    fault: Fault | None = None


@dataclass
class Repo:
    full_name: str
    id: int
    private: bool
    default_branch: str
    roles: dict[str, str] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)


@dataclass
class _Ctx:
    req: Request
    op: Operation
    params: dict[str, str]
    body: Any
    repo: Repo | None


# ---------------------------------------------------------------------------- the fake


class FakeGitea(DescribedForge[Call]):
    """Gitea's (or Forgejo's) REST API and git over HTTP on loopback, for one test.

    >>> with FakeGitea(tmp_path / "git", flavor="forgejo") as fake:        # doctest: +SKIP
    ...     fake.add_repo("octo/gitops")
    ...     env = fake.env()  # ICHOR_GITEA_URL, ICHOR_GITEA_TOKEN
    """

    def __init__(
        self,
        git_root: Path | None = None,
        flavor: Flavor = "gitea",
        *,
        token: str | None = None,
        bot_login: str = "ichor-bot",
        check_responses: bool = True,
    ) -> None:
        if flavor not in DESCRIPTIONS:
            raise ValueError(f"flavor must be one of {sorted(DESCRIPTIONS)}")
        super().__init__(git_root)
        self.flavor = flavor
        self.api = load(flavor)
        self.token = token or secrets.token_hex(20)  # Gitea's tokens: 40 hex digits
        self.bot_login = bot_login
        self.check_responses = check_responses
        self._users: dict[str, int] = {}
        self._repos: dict[str, Repo] = {}
        self._pulls: dict[str, dict[int, dict[str, Any]]] = {}
        self._comments: dict[int, dict[str, Any]] = {}
        self._reviews: dict[int, dict[str, Any]] = {}
        self._review_comments: dict[int, dict[str, Any]] = {}
        self._statuses: list[dict[str, Any]] = []
        self._user_id(bot_login)

    # ------------------------------------------------------------------ lifecycle
    def env(self) -> dict[str, str]:
        """The instance URL (the API is below ``/api/v1``, git on the same origin), token."""
        return {"ICHOR_GITEA_URL": self.url, "ICHOR_GITEA_TOKEN": self.token}

    def basic_auth_header(self) -> str:
        """``Authorization: Basic ...`` with the token as username, for a test's own git."""
        raw = base64.b64encode(f"{self.token}:x-oauth-basic".encode()).decode()
        return f"Authorization: Basic {raw}"

    # ------------------------------------------------------------------ set-up
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

    def add_pull(
        self,
        full_name: str,
        number: int | None = None,
        *,
        head_sha: str,
        base_sha: str | None = None,
        head_ref: str = "feature",
        base_ref: str = "main",
        head_repo: str | None = None,
        state: str = "open",
        user: str = "alice",
        title: str = "A change",
        body: str = "",
    ) -> dict[str, Any]:
        """Register a pull request (``head_repo``: a fork; default the base repository)."""
        with self._lock:
            self._repo(full_name)
            number = number if number is not None else self._next_number(full_name)
            self._user_id(user)
            now = iso()
            self._pulls[full_name][number] = {
                "number": number,
                "id": self._next_id("issue"),
                "state": state,
                "title": title,
                "body": body,
                "user": user,
                "head_ref": head_ref,
                "head_sha": head_sha,
                "head_repo": head_repo or full_name,
                "base_ref": base_ref,
                "base_sha": base_sha or self._branch_sha(full_name, base_ref) or "0" * 40,
                "created_at": now,
                "updated_at": now,
            }
            return self._render_pull(full_name, number)

    def update_pull(self, full_name: str, number: int, **changes: Any) -> dict[str, Any]:
        with self._lock:
            pr = self._pulls[full_name][number]
            unknown = set(changes) - set(pr)
            if unknown:
                raise TypeError(f"unknown pull fields: {sorted(unknown)}")
            pr.update(changes, updated_at=iso())
            return self._render_pull(full_name, number)

    def add_comment(
        self, full_name: str, number: int, body: str, *, user: str = "alice"
    ) -> dict[str, Any]:
        """An issue comment by someone else, as if posted on Gitea."""
        with self._lock:
            self._pull(full_name, number)
            return self._render_comment(self._store_comment(full_name, number, body, user))

    def add_review(
        self,
        full_name: str,
        number: int,
        comments: list[tuple[str, int, str]],
        *,
        user: str = "alice",
        body: str = "",
    ) -> dict[str, Any]:
        """A COMMENT review by someone else: ``comments`` as (path, new line, body)."""
        with self._lock:
            pr = self._pull(full_name, number)
            items = [{"path": p, "new_position": n, "body": b} for p, n, b in comments]
            review = self._store_review(full_name, pr, user, "COMMENT", body, pr["head_sha"], items)
            return self._render_review(review)

    def resolve_review_comment(self, comment_id: int, *, user: str = "alice") -> None:
        """A person resolves a conversation in the web UI."""
        with self._lock:
            self._user_id(user)
            self._review_comments[comment_id]["resolver"] = user

    # ------------------------------------------------------------------ observing
    def statuses(self, full_name: str, sha: str) -> list[dict[str, Any]]:
        """Commit statuses of ``sha``, oldest first (Gitea keeps every one)."""
        with self._lock:
            return [
                self._render_status(s)
                for s in self._statuses
                if s["repo"] == full_name and s["sha"] == sha
            ]

    def comments(self, full_name: str, number: int) -> list[dict[str, Any]]:
        with self._lock:
            return [
                self._render_comment(c)
                for c in self._comments.values()
                if c["repo"] == full_name and c["number"] == number
            ]

    def reviews(self, full_name: str, number: int) -> list[dict[str, Any]]:
        """Reviews, each with its line comments under ``"comments"``."""
        with self._lock:
            return [
                {**self._render_review(r), "comments": self._review_items(r["id"])}
                for r in self._reviews.values()
                if r["repo"] == full_name and r["number"] == number
            ]

    def review_comments(self, full_name: str, number: int) -> list[dict[str, Any]]:
        return [c for r in self.reviews(full_name, number) for c in r["comments"]]

    def pulls(self, full_name: str) -> list[dict[str, Any]]:
        with self._lock:
            return [self._render_pull(full_name, n) for n in sorted(self._pulls[full_name])]

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
    ) -> _Ctx:
        return _Ctx(req, op, params, body, None)

    def _authorize_repo(self, ctx: _Ctx) -> Repo | None:
        if "owner" not in ctx.params or "repo" not in ctx.params:
            return None
        repo = self._repos.get(f"{ctx.params['owner']}/{ctx.params['repo']}")
        if repo is None:
            raise Reject(_error(404, "The target couldn't be found."))
        return repo

    def _not_found(self) -> Response:
        return _error(404, "Not Found")

    def _invalid(self, op: Operation, problems: list[Problem]) -> Response:
        return _error(422, join_problems(problems))

    def _unserved(self, op: Operation) -> Response:
        return _error(501, f"the fake does not serve {op.method} {op.template}")

    def _documented_rules(self, op: Operation, body: Any) -> list[Problem]:
        return _documented_rules(op, body)

    def _authenticate(self, op: Operation, req: Request, call: Call) -> None:
        scheme, credential = split_auth(req.headers.get("authorization"))

        def fail(message: str, reason: str) -> Reject:
            return Reject(_error(401, message), "auth_failures", reason)

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

    # ------------------------------------------------------------------ state helpers
    def _user_id(self, login: str) -> int:
        if login not in self._users:
            self._users[login] = self._next_id("user")
        return self._users[login]

    def _repo(self, full_name: str) -> Repo:
        try:
            return self._repos[full_name]
        except KeyError:
            raise KeyError(f"unknown repository {full_name!r}: add_repo() first") from None

    def _pull(self, full_name: str, number: int) -> dict[str, Any]:
        try:
            return self._pulls[full_name][number]
        except KeyError:
            raise KeyError(f"{full_name}#{number} is no pull request of the fake") from None

    def _next_number(self, full_name: str) -> int:
        return max(self._pulls[full_name], default=0) + 1

    def _branch_sha(self, full_name: str, branch: str) -> str | None:
        repo = self._repos.get(full_name)
        if repo is not None and branch in repo.branches:
            return repo.branches[branch]
        return self._rev_parse(full_name, f"refs/heads/{branch}") or None

    def _store_comment(self, full: str, number: int, body: str, user: str) -> dict[str, Any]:
        now, comment_id = iso(), self._next_id("comment")
        comment: dict[str, Any] = {
            "id": comment_id,
            "repo": full,
            "number": number,
            "user": user,
            "body": body,
            "created_at": now,
            "updated_at": now,
        }
        self._comments[comment_id] = comment
        return comment

    def _store_review(
        self,
        full: str,
        pr: dict[str, Any],
        user: str,
        state: str,
        body: str,
        commit_id: str,
        items: list[dict[str, Any]],
    ) -> dict[str, Any]:
        now = iso()
        review = {
            "id": self._next_id("review"),
            "repo": full,
            "number": pr["number"],
            "user": user,
            "state": state,
            "body": body,
            "commit_id": commit_id,
            "submitted_at": now,
        }
        self._reviews[review["id"]] = review
        for item in items:
            new, old = item.get("new_position") or 0, item.get("old_position") or 0
            comment = {
                "id": self._next_id("comment"),  # review comments are comments in Gitea
                "review_id": review["id"],
                "repo": full,
                "number": pr["number"],
                "user": user,
                "path": item["path"],
                "line": new if new > 0 else -old,
                "body": item.get("body") or "",
                "commit_id": commit_id,
                "resolver": None,
                "created_at": now,
            }
            self._review_comments[comment["id"]] = comment
        return review

    def _review_items(self, review_id: int) -> list[dict[str, Any]]:
        return [
            self._render_review_comment(c)
            for c in self._review_comments.values()
            if c["review_id"] == review_id
        ]

    def _page(self, req: Request, items: list[T]) -> tuple[list[T], dict[str, str]]:
        limit = int(req.query.get("limit") or 0)
        limit = _DEFAULT_LIMIT if limit <= 0 else min(limit, _MAX_LIMIT)
        chunk, rels = self._page_of(req, items, "limit", limit)
        headers = {"x-total-count": str(len(items))}
        if rels:
            headers["link"] = link_header(rels, ("next", "last", "first", "prev"))
        return chunk, headers

    # ------------------------------------------------------------------ rendering
    def _render_user(self, login: str) -> dict[str, Any]:
        return {
            "id": self._user_id(login),
            "login": login,
            "login_name": "",
            "full_name": "",
            "email": f"{login}@noreply.localhost",
            "avatar_url": f"{self.url}/avatars/{login}",
            "html_url": f"{self.url}/{login}",
            "created": "2024-01-01T00:00:00Z",
            "is_admin": False,
            "restricted": False,
            "active": True,
            "visibility": "public",
        }

    def _render_repo(self, full: str) -> dict[str, Any]:
        repo = self._repos.get(full)
        owner, _, name = full.partition("/")
        return {
            "id": repo.id if repo is not None else 0,
            "name": name,
            "full_name": full,
            "owner": self._render_user(owner),
            "private": repo.private if repo is not None else False,
            "fork": repo is None,
            "empty": False,
            "html_url": f"{self.url}/{full}",
            "clone_url": self.clone_url(full),
            "url": f"{self.url}{API_PREFIX}/repos/{full}",
            "default_branch": repo.default_branch if repo is not None else "main",
        }

    def _render_pull(self, full: str, number: int) -> dict[str, Any]:
        pr = self._pulls[full][number]

        def side(ref: str, sha: str, repo_full: str) -> dict[str, Any]:
            rendered = self._render_repo(repo_full)
            owner = repo_full.partition("/")[0]
            label = ref if repo_full == full else f"{owner}:{ref}"
            return {
                "label": label,
                "ref": ref,
                "sha": sha,
                "repo_id": rendered["id"],
                "repo": rendered,
            }

        web = f"{self.url}/{full}/pulls/{number}"
        out = {
            "id": pr["id"],
            "number": number,
            "url": web,
            "html_url": web,
            "diff_url": f"{web}.diff",
            "patch_url": f"{web}.patch",
            "user": self._render_user(pr["user"]),
            "title": pr["title"],
            "body": pr["body"],
            "state": "open" if pr["state"] == "open" else "closed",
            "draft": False,
            "is_locked": False,
            "comments": sum(
                1 for c in self._comments.values() if (c["repo"], c["number"]) == (full, number)
            ),
            "mergeable": pr["state"] == "open",
            "merged": pr["state"] == "merged",
            "head": side(pr["head_ref"], pr["head_sha"], pr["head_repo"]),
            "base": side(pr["base_ref"], pr["base_sha"], full),
            "created_at": pr["created_at"],
            "updated_at": pr["updated_at"],
        }
        if pr["state"] != "open":
            out["closed_at"] = pr["updated_at"]
        return out

    def _render_comment(self, c: dict[str, Any]) -> dict[str, Any]:
        web = f"{self.url}/{c['repo']}/pulls/{c['number']}"
        return {
            "id": c["id"],
            "html_url": f"{web}#issuecomment-{c['id']}",
            "pull_request_url": web,
            "issue_url": "",
            "user": self._render_user(c["user"]),
            "original_author": "",
            "original_author_id": 0,
            "body": c["body"],
            "assets": [],
            "created_at": c["created_at"],
            "updated_at": c["updated_at"],
        }

    def _render_status(self, s: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": s["id"],
            "status": s["state"],
            "context": s["context"],
            "description": s["description"],
            "target_url": s["target_url"],
            "url": f"{self.url}{API_PREFIX}/repos/{s['repo']}/statuses/{s['sha']}",
            "creator": self._render_user(s["creator"]),
            "created_at": s["created_at"],
            "updated_at": s["created_at"],
        }

    def _render_review(self, r: dict[str, Any]) -> dict[str, Any]:
        pr = self._pulls[r["repo"]][r["number"]]
        web = f"{self.url}/{r['repo']}/pulls/{r['number']}"
        count = sum(1 for c in self._review_comments.values() if c["review_id"] == r["id"])
        return {
            "id": r["id"],
            "user": self._render_user(r["user"]),
            "body": r["body"],
            "commit_id": r["commit_id"],
            "state": r["state"],
            "stale": r["commit_id"] != pr["head_sha"],
            "official": False,
            "dismissed": False,
            "comments_count": count,
            "submitted_at": r["submitted_at"],
            "updated_at": r["submitted_at"],
            "html_url": f"{web}#issuecomment-{r['id']}",
            "pull_request_url": web,
        }

    def _render_review_comment(self, c: dict[str, Any]) -> dict[str, Any]:
        web = f"{self.url}/{c['repo']}/pulls/{c['number']}"
        out = {
            "id": c["id"],
            "body": c["body"],
            "user": self._render_user(c["user"]),
            "pull_request_review_id": c["review_id"],
            "path": c["path"],
            "commit_id": c["commit_id"],
            "original_commit_id": c["commit_id"],
            "diff_hunk": "",
            "position": max(0, c["line"]),
            "original_position": max(0, -c["line"]),
            "html_url": f"{web}/files#issuecomment-{c['id']}",
            "pull_request_url": web,
            "created_at": c["created_at"],
            "updated_at": c["created_at"],
        }
        if c["resolver"] is not None:  # Gitea sends null; the description has no nullable
            out["resolver"] = self._render_user(c["resolver"])
        return out

    # ------------------------------------------------------------------ handlers
    def _ctx_pull(self, ctx: _Ctx) -> dict[str, Any]:
        assert ctx.repo is not None
        pr = self._pulls[ctx.repo.full_name].get(int(ctx.params["index"]))
        if pr is None:
            raise Reject(_error(404, "pull request does not exist"))
        return pr

    def _op_userGetCurrent(self, ctx: _Ctx) -> Response:
        return Response(200, self._render_user(self.bot_login))

    def _op_repoCreateStatus(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        body = ctx.body or {}
        status = {
            "id": self._next_id("status"),
            "repo": ctx.repo.full_name,
            "sha": ctx.params["sha"],
            "state": body["state"],
            "context": body.get("context") or "default",
            "description": body.get("description") or "",
            "target_url": body.get("target_url") or "",
            "creator": self.bot_login,
            "created_at": iso(),
        }
        self._statuses.append(status)
        return Response(201, self._render_status(status))

    def _op_repoListStatuses(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        found = [
            s
            for s in reversed(self._statuses)
            if s["repo"] == ctx.repo.full_name and s["sha"] == ctx.params["sha"]
        ]
        items, headers = self._page(ctx.req, found)
        return Response(200, [self._render_status(s) for s in items], headers)

    def _op_issueGetComments(self, ctx: _Ctx) -> Response:
        pr = self._ctx_pull(ctx)
        assert ctx.repo is not None
        found = [
            self._render_comment(c)
            for c in self._comments.values()
            if c["repo"] == ctx.repo.full_name and c["number"] == pr["number"]
        ]
        return Response(200, found)  # Gitea answers every comment at once: no paging

    def _op_issueCreateComment(self, ctx: _Ctx) -> Response:
        pr = self._ctx_pull(ctx)
        assert ctx.repo is not None
        comment = self._store_comment(
            ctx.repo.full_name, pr["number"], ctx.body["body"], self.bot_login
        )
        return Response(201, self._render_comment(comment))

    def _existing_comment(self, ctx: _Ctx) -> dict[str, Any]:
        assert ctx.repo is not None
        comment = self._comments.get(int(ctx.params["id"]))
        if comment is None or comment["repo"] != ctx.repo.full_name:
            raise Reject(_error(404, "comment does not exist"))
        return comment

    def _op_issueGetComment(self, ctx: _Ctx) -> Response:
        return Response(200, self._render_comment(self._existing_comment(ctx)))

    def _op_issueEditComment(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        comment = self._existing_comment(ctx)
        if comment["user"] != self.bot_login and ctx.repo.roles.get(self.bot_login) not in (
            "admin",
            "owner",
        ):
            raise Reject(_error(403, "user should be the poster or an admin"))
        comment["body"], comment["updated_at"] = ctx.body["body"], iso()
        return Response(200, self._render_comment(comment))

    def _op_repoListPullRequests(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        q = ctx.req.query
        state = q.get("state") or "open"
        base = q.get("base_branch") or q.get("base")  # Gitea: base_branch; Forgejo: base, head
        head = q.get("head")
        found = [
            n
            for n, pr in sorted(self._pulls[ctx.repo.full_name].items(), reverse=True)
            if state in ("all", "open" if pr["state"] == "open" else "closed")
            and base in (None, pr["base_ref"])
            and head in (None, pr["head_ref"])
        ]
        items, headers = self._page(ctx.req, found)
        return Response(200, [self._render_pull(ctx.repo.full_name, n) for n in items], headers)

    def _op_repoGetPullRequest(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        return Response(200, self._render_pull(ctx.repo.full_name, self._ctx_pull(ctx)["number"]))

    def _op_repoGetPullRequestByBaseHead(self, ctx: _Ctx) -> Response:
        """Like Gitea: the first pull for base and head, whatever its state."""
        assert ctx.repo is not None
        full = ctx.repo.full_name
        owner, _, branch = ctx.params["head"].rpartition(":")
        head_repo = f"{owner}/{ctx.repo.full_name.partition('/')[2]}" if owner else full
        for n, pr in sorted(self._pulls[full].items()):
            if (pr["base_ref"], pr["head_ref"], pr["head_repo"]) == (
                ctx.params["base"],
                branch,
                head_repo,
            ):
                return Response(200, self._render_pull(full, n))
        raise Reject(_error(404, "pull request does not exist"))

    def _op_repoCreatePullRequest(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        full, body = ctx.repo.full_name, ctx.body or {}
        head, base = str(body.get("head") or ""), str(body.get("base") or "")
        head_sha, base_sha = self._branch_sha(full, head), self._branch_sha(full, base)
        if head_sha is None or base_sha is None:
            raise Reject(
                _error(404, f"branch {head if head_sha is None else base!r} does not exist")
            )
        if head == base:
            raise Reject(
                _error(
                    422, "Invalid PullRequest: There are no changes between the head and the base"
                )
            )
        for pr in self._pulls[full].values():
            if pr["state"] == "open" and (pr["head_ref"], pr["base_ref"]) == (head, base):
                message = (
                    f"pull request already exists for these targets [id: {pr['id']}, "
                    f"head_branch: {head}, base_branch: {base}]"
                )
                raise Reject(_error(409, message))
        created = self.add_pull(
            full,
            head_sha=head_sha,
            base_sha=base_sha,
            head_ref=head,
            base_ref=base,
            user=self.bot_login,
            title=str(body.get("title") or ""),
            body=str(body.get("body") or ""),
        )
        return Response(201, created)

    def _op_repoListPullReviews(self, ctx: _Ctx) -> Response:
        pr = self._ctx_pull(ctx)
        assert ctx.repo is not None
        found = [
            r
            for r in self._reviews.values()
            if (r["repo"], r["number"]) == (ctx.repo.full_name, pr["number"])
            and (r["state"] != "PENDING" or r["user"] == self.bot_login)
        ]
        items, headers = self._page(ctx.req, found)
        return Response(200, [self._render_review(r) for r in items], headers)

    def _op_repoCreatePullReview(self, ctx: _Ctx) -> Response:
        pr = self._ctx_pull(ctx)
        assert ctx.repo is not None
        body = ctx.body or {}
        event = body.get("event")
        # Gitea: any event but these three leaves the review PENDING (invisible to others).
        state = event if event in ("APPROVED", "REQUEST_CHANGES", "COMMENT") else "PENDING"
        review = self._store_review(
            ctx.repo.full_name,
            pr,
            self.bot_login,
            state,
            str(body.get("body") or ""),
            str(body.get("commit_id") or pr["head_sha"]),
            list(body.get("comments") or []),
        )
        return Response(200, self._render_review(review))

    def _ctx_review(self, ctx: _Ctx) -> dict[str, Any]:
        pr = self._ctx_pull(ctx)
        review = self._reviews.get(int(ctx.params["id"]))
        if (
            review is None
            or review["number"] != pr["number"]
            or ctx.repo is None
            or review["repo"] != ctx.repo.full_name
        ):
            raise Reject(_error(404, "review does not exist"))
        return review

    def _op_repoGetPullReview(self, ctx: _Ctx) -> Response:
        return Response(200, self._render_review(self._ctx_review(ctx)))

    def _op_repoGetPullReviewComments(self, ctx: _Ctx) -> Response:
        return Response(200, self._review_items(self._ctx_review(ctx)["id"]))

    def _mark(self, ctx: _Ctx, resolver: str | None) -> Response:
        """Gitea's (un)resolve: the PR's poster or a writer of the repository may."""
        assert ctx.repo is not None
        comment = self._review_comments.get(int(ctx.params["id"]))
        if comment is None or comment["repo"] != ctx.repo.full_name:
            raise Reject(_error(404, "comment does not exist"))
        pr = self._pulls[comment["repo"]][comment["number"]]
        if pr["user"] != self.bot_login and ctx.repo.roles.get(self.bot_login) not in (
            "owner",
            "admin",
            "write",
        ):
            raise Reject(_error(403, "user should have permission to resolve comment"))
        comment["resolver"] = resolver
        return Response(204)

    def _op_repoResolvePullReviewComment(self, ctx: _Ctx) -> Response:
        return self._mark(ctx, self.bot_login)

    def _op_repoUnresolvePullReviewComment(self, ctx: _Ctx) -> Response:
        return self._mark(ctx, None)

    def _op_repoGetRepoPermissions(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        who = ctx.params["collaborator"]
        if who != self.bot_login and ctx.repo.roles.get(self.bot_login) not in ("admin", "owner"):
            raise Reject(_error(403, _FORBIDDEN_PERMISSION))
        if who not in self._users:
            raise Reject(_error(404, f"user redirect does not exist [name: {who}]"))
        default = (
            "owner"
            if who == ctx.repo.full_name.partition("/")[0]
            else ("none" if ctx.repo.private else "read")
        )
        role = ctx.repo.roles.get(who, default)
        body = {"permission": role, "role_name": role, "user": self._render_user(who)}
        return Response(200, body)


# ---------------------------------------------------------------------------- helpers


def _error(status: int, message: str) -> Response:
    """Gitea's error shape: ``{"message", "url"}`` (url: the instance's API docs)."""
    return Response(status, {"message": message, "url": "https://gitea.invalid/api/swagger"})


def _documented_rules(op: Operation, body: Any) -> list[Problem]:
    """What Gitea refuses that its description cannot say."""
    if not isinstance(body, dict):
        return []
    problems: list[Problem] = []
    if op.operation_id == "repoCreateStatus" and not body.get("state"):
        problems.append(Problem("state", "missing_field", "state: a commit status needs a state"))
    if op.operation_id == "repoCreatePullReview":
        comments = body.get("comments") or []
        if (
            body.get("event") == "COMMENT"
            and not str(body.get("body") or "").strip()
            and not comments
        ):
            problems.append(
                Problem("body", "invalid", "review event COMMENT requires a body or a comment")
            )
        for i, c in enumerate(comments):
            where = f"comments.{i}"
            if not c.get("path"):
                problems.append(Problem(f"{where}.path", "missing_field", f"{where}: no path"))
            if (c.get("new_position") or 0) <= 0 and (c.get("old_position") or 0) <= 0:
                problems.append(
                    Problem(
                        where,
                        "invalid",
                        f"{where}: new_position or old_position must be a line (> 0)",
                    )
                )
            if not str(c.get("body") or "").strip():
                problems.append(Problem(f"{where}.body", "missing_field", f"{where}: empty body"))
    return problems
