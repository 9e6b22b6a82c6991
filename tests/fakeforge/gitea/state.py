"""What every concern of the fake Gitea shares: the records it keeps, the state behind them,
Gitea's error shape, paging, and rendering users and repositories."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from tests.fakeforge.base import DescribedCall, DescribedForge, Fault, Reject, link_header
from tests.fakeforge.gitea.swagger import DESCRIPTIONS, load
from tests.fakeforge.httpserver import Request, Response
from tests.fakeforge.openapi import Operation

T = TypeVar("T")
Flavor = Literal["gitea", "forgejo"]

API_PREFIX = "/api/v1"
_DEFAULT_LIMIT = 30  # Gitea's DEFAULT_PAGING_NUM
_MAX_LIMIT = 50  # Gitea's MAX_RESPONSE_ITEMS


def iso(ts: float | None = None) -> str:
    return datetime.fromtimestamp(int(time.time() if ts is None else ts), UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


def iso_ms(ts: float | None = None) -> str:
    """A comment's stamp. Gitea's have whole seconds; this fake's have milliseconds, so a test
    need not wait out a second between a check and a comment the bot must see as later (an
    ``/approve`` covers only what checks published before the comment showed)."""
    moment = datetime.fromtimestamp(time.time() if ts is None else ts, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


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
class Ctx:
    req: Request
    op: Operation
    params: dict[str, str]
    body: Any
    repo: Repo | None


def error(status: int, message: str) -> Response:
    """Gitea's error shape: ``{"message", "url"}`` (url: the instance's API docs)."""
    return Response(status, {"message": message, "url": "https://gitea.invalid/api/swagger"})


class GiteaState(DescribedForge[Call]):
    """The fake's state; each concern of :class:`tests.fakeforge.gitea.FakeGitea` adds to it."""

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
        self._reactions: list[dict[str, Any]] = []
        self._teams: dict[int, dict[str, Any]] = {}  # see Teams
        self._comment_page: int | None = None  # None: the listing is not paged, as on Gitea
        self._before_pushes: list[Callable[[], None]] = []  # see Faults.before_push
        self._user_id(bot_login)

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

    def _page(
        self, req: Request, items: list[T], cap: int = _MAX_LIMIT
    ) -> tuple[list[T], dict[str, str]]:
        limit = int(req.query.get("limit") or 0)
        limit = min(_DEFAULT_LIMIT if limit <= 0 else limit, cap)
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

    def _ctx_pull(self, ctx: Ctx) -> dict[str, Any]:
        assert ctx.repo is not None
        pr = self._pulls[ctx.repo.full_name].get(int(ctx.params["index"]))
        if pr is None:
            raise Reject(error(404, "pull request does not exist"))
        return pr
