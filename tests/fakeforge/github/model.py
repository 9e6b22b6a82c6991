"""The fake GitHub's records: a call, an installation, a repository, a token, what a handler is
handed; GitHub's error answers; the fake's clock."""

from __future__ import annotations

import base64
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tests.fakeforge.base import DescribedCall, Fault
from tests.fakeforge.httpserver import Request, Response
from tests.fakeforge.openapi import DOCS, Operation

DEFAULT_INSTALLATION_PERMISSIONS = {
    "checks": "write",
    "contents": "write",
    "issues": "write",
    "members": "read",
    "merge_queues": "read",
    "metadata": "read",
    "pull_requests": "write",
}
ZERO_SHA = "0" * 40

_PACKAGE = __name__.rpartition(".")[0]


def _now() -> float:
    return time.time()


def time_now() -> float:
    """The fake's clock. Tests replace ``tests.fakeforge.github._now`` (this module's
    :func:`_now`, as the package names it), so every module reads it there, on each call."""
    clock: Callable[[], float] = sys.modules[_PACKAGE]._now
    return clock()


def iso(ts: float) -> str:
    return datetime.fromtimestamp(int(ts), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(ts: float) -> str:
    """A comment's stamp. GitHub's have whole seconds; this fake's have milliseconds, so a test
    need not wait out a second between a check and a comment the bot must see as later (an
    ``/approve`` covers only what checks published before the comment showed)."""
    moment = datetime.fromtimestamp(ts, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def error(message: str, status: int | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message, "documentation_url": DOCS, **extra}
    if status is not None:
        body["status"] = str(status)
    return body


def not_found() -> Response:
    return Response(404, error("Not Found", 404))


def validation_failed(errors: list[dict[str, Any]]) -> Response:
    return Response(422, error("Validation Failed", 422, errors=errors))


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode().rstrip("=")


@dataclass
class Call(DescribedCall):
    """One request the fake answered. ``headers`` has Authorization cut to its scheme;
    ``token`` is the credential that was sent (installation token or JWT), for assertions."""

    method: str
    path: str
    query: dict[str, str]
    json: Any
    body: bytes
    headers: dict[str, str]
    token: str | None
    auth_scheme: str | None
    status: int = 0
    response: Any = None
    template: str | None = None  # the description's path template, when one matched
    operation_id: str | None = None
    errors: list[str] = field(default_factory=list)
    fault: Fault | None = None
    time: float = 0.0


@dataclass
class Installation:
    id: int
    account: str
    permissions: dict[str, str]


@dataclass
class Repo:
    full_name: str
    id: int
    installation_id: int
    private: bool
    default_branch: str
    roles: dict[str, str] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)  # set_branch() overrides git

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/", 1)[1]


@dataclass
class Token:
    value: str
    installation_id: int
    expires_at: float
    permissions: dict[str, str]
    repositories: frozenset[str] | None  # full names; None: every repository of the installation
    revoked: bool = False

    def valid(self, now: float) -> bool:
        return not self.revoked and now < self.expires_at


@dataclass
class Auth:
    kind: str  # "app", "installation" or "none" (an unauthenticated endpoint)
    token: Token | None


@dataclass
class Ctx:
    req: Request
    op: Operation
    params: dict[str, str]
    body: Any
    repo: Repo | None
    auth: Auth
