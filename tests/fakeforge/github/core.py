"""The fake GitHub's state and what every concern shares: the constructor, the bot's settings,
the request pipeline's hooks, ids, paging, and the objects many answers embed (users, the app,
repositories, minimal pulls). Each concern is a mixin of :class:`GitHubCore` beside this module;
the package composes them into :class:`tests.fakeforge.github.FakeGitHub`."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from tests.fakeforge.base import DescribedForge, link_header, redacted, split_auth
from tests.fakeforge.github.description import handler_name, resource, supplemented
from tests.fakeforge.github.keys import public_pem, shared_private_key
from tests.fakeforge.github.model import (
    DEFAULT_INSTALLATION_PERMISSIONS,
    Auth,
    Call,
    Ctx,
    Installation,
    Repo,
    Token,
    b64,
    error,
    not_found,
    time_now,
    validation_failed,
)
from tests.fakeforge.github.rules import documented_rules
from tests.fakeforge.httpserver import Request, Response
from tests.fakeforge.openapi import OpenApi, Operation, Problem, overlay_object

T = TypeVar("T")

_LINK_ORDER = ("next", "last", "prev", "first")


class GitHubCore(DescribedForge[Call]):
    """The state of one fake GitHub and the helpers every concern's mixin uses."""

    def __init__(
        self,
        git_root: Path | None = None,
        app_id: str | int = "12345",
        *,
        app_slug: str = "ichor-bot",
        private_key_pem: str | None = None,
        token_prefix: str = "ghs_",
        token_length: int = 60,
        token_alphabet: str = string.ascii_letters + string.digits,
        token_factory: Callable[[], str] | None = None,
        token_ttl: float = 3600.0,
        jwt_max_lifetime: int = 600,
        first_id: int = 1,
        check_responses: bool = True,
        description: OpenApi | None = None,
    ) -> None:
        super().__init__(git_root, first_id=first_id)
        self.app_id = str(app_id)
        self.app_slug = app_slug
        self.bot_login = f"{app_slug}[bot]"
        self.private_key_pem = private_key_pem or shared_private_key()
        self.public_key_pem = public_pem(self.private_key_pem)
        self.token_prefix = token_prefix
        self.token_length = token_length
        self.token_alphabet = token_alphabet
        self.token_factory = token_factory
        self.token_ttl = token_ttl
        self.jwt_max_lifetime = jwt_max_lifetime
        self.check_responses = check_responses
        self.api = description or supplemented()
        self._request_ids = itertools.count(1)

        self._installations: dict[int, Installation] = {}
        # (org, team slug) -> login -> membership state (active, pending); lowercased
        self._team_members: dict[tuple[str, str], dict[str, str]] = {}
        self._repos: dict[str, Repo] = {}
        self._tokens: dict[str, Token] = {}
        self._token_order: list[str] = []
        self._tokens_over_http = 0
        self._pulls: dict[str, dict[int, dict[str, Any]]] = {}
        self._issues: dict[str, dict[int, dict[str, Any]]] = {}
        self._comments: dict[int, dict[str, Any]] = {}
        self._reactions: list[dict[str, Any]] = []
        self._reviews: dict[int, dict[str, Any]] = {}
        self._review_comments: dict[int, dict[str, Any]] = {}
        self._diff_lines: dict[tuple[str, int], dict[str, frozenset[int]]] = {}
        self._check_runs: dict[int, dict[str, Any]] = {}
        self._suites: dict[tuple[str, str], int] = {}
        self._rate_used = 0
        self._bots: set[str] = set()  # logins typed "Bot" besides the "[bot]" ones
        # The manifest flow: codes GitHub's creation page handed out, and the Apps made.
        self._manifest_codes: dict[str, dict[str, Any]] = {}
        self._registrations: list[dict[str, Any]] = []
        # The app's webhook: where deliveries go (url, secret), and every attempt (hooks).
        self._webhook: tuple[str, str] | None = None
        self._deliveries: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ lifecycle
    @property
    def git_url(self) -> str:
        """git's own server (github.com serves git on another host than the API)."""
        return str(self.git.url)

    @property
    def web_url(self) -> str:
        """Base of html_url links: the git server's, as github.com serves both."""
        return self.git_url if self._git is not None else self.url

    def env(self) -> dict[str, str]:
        """The bot's settings pointing at this fake (the API base :attr:`url` has no /api/v3
        prefix; git is on :attr:`git_url`)."""
        values = {
            "ICHOR_GITHUB_API_URL": self.url,
            "ICHOR_GITHUB_APP_ID": self.app_id,
            "ICHOR_GITHUB_PRIVATE_KEY": self.private_key_pem,
        }
        if self._git is not None:
            values["ICHOR_GITHUB_URL"] = self.git_url
        return values

    # ------------------------------------------------------------------ request pipeline
    def _new_call(self, req: Request) -> Call:
        scheme, token = split_auth(req.headers.get("authorization"))
        return Call(
            method=req.method,
            path=req.path,
            query=dict(req.query),
            json=None,
            body=req.body,
            headers=redacted(req.headers),
            token=token,
            auth_scheme=scheme,
            time=time_now(),
        )

    def _context(
        self, req: Request, op: Operation, params: dict[str, str], body: Any, auth: Auth
    ) -> Ctx:
        return Ctx(req=req, op=op, params=params, body=body, repo=None, auth=auth)

    def _handler_name(self, op: Operation) -> str:
        return handler_name(op)

    def _not_found(self) -> Response:
        return not_found()

    def _invalid(self, op: Operation, problems: list[Problem]) -> Response:
        return validation_failed([p.as_github(resource(op)) for p in problems])

    def _not_json(self, op: Operation) -> Response:
        return Response(400, error("Problems parsing JSON", 400))

    def _unserved(self, op: Operation) -> Response:
        return Response(501, error(f"the fake does not serve {op.method} {op.template}"))

    def use_rate_limit(self, remaining: int) -> None:
        """From now on the rate limit has ``remaining`` requests left (of 5000), and counts
        down from there."""
        with self._lock:
            self._rate_used = 5000 - remaining

    def _default_headers(self) -> dict[str, str]:
        with self._lock:
            self._rate_used += 1
            used = self._rate_used
        return {
            "x-github-request-id": f"FAKE:{next(self._request_ids):08X}",
            "x-github-media-type": "github.v3; format=json",
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": str(max(0, 5000 - used)),
            "x-ratelimit-used": str(used),
            "x-ratelimit-reset": str(int(time_now()) + 3600),
            "x-ratelimit-resource": "core",
        }

    def _documented_rules(self, op: Operation, body: Any) -> list[Problem]:
        return documented_rules(op, body)

    def _serve(self, req: Request, op: Operation, ctx: Any) -> Response:
        """The handler's answer, with GitHub's conditional requests: a GET answered 200 carries
        an ETag, and one asked with that ETag in If-None-Match is answered 304, bodiless."""
        response = super()._serve(req, op, ctx)
        if req.method != "GET" or response.status != 200:
            return response
        raw = response.body
        content = raw if isinstance(raw, bytes) else json.dumps(raw, sort_keys=True).encode()
        tag = f'W/"{hashlib.sha256(content).hexdigest()[:40]}"'
        response.headers["etag"] = tag
        asked = {t.strip() for t in req.headers.get("if-none-match", "").split(",")}
        if tag in asked:
            kept = {k: v for k, v in response.headers.items() if k in ("etag", "link")}
            return Response(304, None, kept)
        return response

    def _handle(self, req: Request) -> Response:
        response = super()._handle(req)
        if response.status == 304:  # GitHub does not count a 304 against the rate limit
            with self._lock:
                self._rate_used -= 1
                used = self._rate_used
            response.headers["x-ratelimit-used"] = str(used)
            response.headers["x-ratelimit-remaining"] = str(max(0, 5000 - used))
        return response

    # ------------------------------------------------------------------ ids, helpers
    @staticmethod
    def _stable_id(name: str) -> int:
        return 10_000_000 + int.from_bytes(hashlib.sha256(name.encode()).digest()[:3], "big")

    def _repo(self, full_name: str) -> Repo:
        try:
            return self._repos[full_name]
        except KeyError:
            raise KeyError(f"{full_name} is not registered: call add_repo() first") from None

    def _next_number(self, full_name: str) -> int:
        used = set(self._pulls[full_name]) | set(self._issues[full_name])
        return max(used, default=0) + 1

    def _issue_exists(self, full_name: str, number: int) -> bool:
        return number in self._pulls.get(full_name, {}) or number in self._issues.get(full_name, {})

    def _branch_sha(self, full_name: str, branch: str) -> str | None:
        """The branch head: set_branch() first, then the bare repository ("" when it has no
        such branch); None: unknown."""
        repo = self._repos.get(full_name)
        if repo is not None and branch in repo.branches:
            return repo.branches[branch]
        return self._rev_parse(full_name, f"refs/heads/{branch}^{{commit}}")

    def _page(self, req: Request, items: list[T]) -> tuple[list[T], dict[str, str]]:
        per_page = max(1, min(100, int(req.query.get("per_page") or 30)))
        chunk, rels = self._page_of(req, items, "per_page", per_page)
        return chunk, ({"link": link_header(rels, _LINK_ORDER)} if rels else {})

    # ------------------------------------------------------------------ shared rendering
    def _skeleton(self, component: str) -> Any:
        return self.api.skeleton({"$ref": f"#/components/schemas/{component}"})

    def _user(self, login: str) -> dict[str, Any]:
        is_bot = login.endswith("[bot]")
        base = f"{self.url}/users/{quote(login)}"
        kind = "Bot" if is_bot or login in self._bots else "User"
        return overlay_object(
            self._skeleton("simple-user"),
            {
                "login": login,
                "id": self._stable_id("user:" + login),
                "node_id": "U_" + b64(login),
                "type": kind,
                "url": base,
                "html_url": f"{self.web_url}/{quote(login)}"
                if not is_bot
                else f"{self.web_url}/apps/{self.app_slug}",
                "avatar_url": f"{self.web_url}/avatars/{quote(login)}",
                "gravatar_id": "",
                "site_admin": False,
                "repos_url": f"{base}/repos",
                "followers_url": f"{base}/followers",
                "following_url": f"{base}/following{{/other_user}}",
                "gists_url": f"{base}/gists{{/gist_id}}",
                "starred_url": f"{base}/starred{{/owner}}{{/repo}}",
                "subscriptions_url": f"{base}/subscriptions",
                "organizations_url": f"{base}/orgs",
                "events_url": f"{base}/events{{/privacy}}",
                "received_events_url": f"{base}/received_events",
            },
        )

    def _app(self) -> dict[str, Any]:
        return overlay_object(
            self._skeleton("integration"),
            {
                "id": int(self.app_id) if self.app_id.isdigit() else 1,
                "slug": self.app_slug,
                "node_id": "A_" + b64(self.app_slug),
                "client_id": "Iv1.fake",
                "owner": self._user("octo"),
                "name": self.app_slug,
                "description": "",
                "external_url": f"{self.web_url}/apps/{self.app_slug}",
                "html_url": f"{self.web_url}/apps/{self.app_slug}",
                "created_at": "2020-01-01T00:00:00Z",
                "updated_at": "2020-01-01T00:00:00Z",
                "permissions": dict(DEFAULT_INSTALLATION_PERMISSIONS),
                "events": ["check_run", "check_suite", "issue_comment", "pull_request", "push"],
            },
        )

    def _repo_object(self, full_name: str, component: str = "repository") -> dict[str, Any]:
        repo = self._repos.get(full_name)
        owner, _, name = full_name.partition("/")
        api = f"{self.url}/repos/{full_name}"
        clone = f"{self.web_url}/{full_name}.git"
        if self._git is not None:
            with contextlib.suppress(Exception):
                clone = self.clone_url(full_name)
        return overlay_object(
            self._skeleton(component),
            {
                "id": repo.id if repo else self._stable_id(full_name),
                "node_id": "R_" + b64(full_name),
                "name": name,
                "full_name": full_name,
                "owner": self._user(owner),
                "private": repo.private if repo else False,
                "fork": repo is None,
                "html_url": f"{self.web_url}/{full_name}",
                "url": api,
                "clone_url": clone,
                "git_url": clone,
                "ssh_url": f"git@fake.invalid:{full_name}.git",
                "svn_url": f"{self.web_url}/{full_name}",
                "default_branch": repo.default_branch if repo else "main",
                "visibility": "private" if (repo and repo.private) else "public",
                "pulls_url": api + "/pulls{/number}",
                "created_at": "2020-01-01T00:00:00Z",
                "updated_at": "2020-01-01T00:00:00Z",
                "pushed_at": "2020-01-01T00:00:00Z",
            },
        )

    def _association(self, full_name: str, user: str) -> str:
        role = self._repos[full_name].roles.get(user) if full_name in self._repos else None
        return {"admin": "OWNER", "maintain": "MEMBER", "write": "COLLABORATOR"}.get(
            role or "", "NONE"
        )

    def _minimal_pull(self, full_name: str, number: int) -> dict[str, Any]:
        pr = self._pulls[full_name][number]

        def side(ref: str, sha: str, repo_full: str) -> dict[str, Any]:
            return {
                "ref": ref,
                "sha": sha,
                "repo": {
                    "id": self._repos[repo_full].id
                    if repo_full in self._repos
                    else self._stable_id(repo_full),
                    "url": f"{self.url}/repos/{repo_full}",
                    "name": repo_full.split("/", 1)[1],
                },
            }

        return {
            "id": pr["id"],
            "number": number,
            "url": f"{self.url}/repos/{full_name}/pulls/{number}",
            "head": side(pr["head_ref"], pr["head_sha"], pr["head_repo"]),
            "base": side(pr["base_ref"], pr["base_sha"], full_name),
        }
