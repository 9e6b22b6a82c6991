"""Faults the fake GitHub can inject the way GitHub answers them: rate limits (primary and
secondary), a failing permission lookup or open-pull-request lookup, a push that loses a race,
and the bodies of injected statuses."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from tests.fakeforge.base import Fault
from tests.fakeforge.github.core import GitHubCore
from tests.fakeforge.github.model import error, time_now


class FaultsMixin(GitHubCore):
    def inject_secondary_rate_limit(
        self, method: str | None = None, path: str = r".*", *, retry_after: int = 1, times: int = 1
    ) -> Fault:
        """429 with ``Retry-After`` (GitHub's secondary rate limit)."""
        return self.inject(
            method,
            path,
            status=429,
            headers={"retry-after": str(retry_after)},
            body=error("You have exceeded a secondary rate limit. Please wait a few minutes."),
            times=times,
        )

    def inject_primary_rate_limit(
        self, method: str | None = None, path: str = r".*", *, reset_in: float = 1, times: int = 1
    ) -> Fault:
        """403 with ``x-ratelimit-remaining: 0`` and ``x-ratelimit-reset`` (epoch seconds)."""
        return self.inject(
            method,
            path,
            status=403,
            headers={
                "x-ratelimit-limit": "5000",
                "x-ratelimit-remaining": "0",
                "x-ratelimit-used": "5000",
                "x-ratelimit-reset": str(int(time_now() + reset_in + 0.999)),
                "x-ratelimit-resource": "core",
            },
            body=error("API rate limit exceeded for installation."),
            times=times,
        )

    def inject_permission_failure(
        self, status: int, *, user: str | None = None, body: Any = None, times: int | None = 1
    ) -> Fault:
        """``status`` (a 5xx, or 403) for the next ``times`` collaborator-permission lookups
        (of ``user`` only, when given); ``times=None``: every one. ``body`` defaults to
        GitHub's message for the status."""
        who = re.escape(quote(user, safe="")) if user is not None else "[^/]+"
        path = rf"/repos/[^/]+/[^/]+/collaborators/{who}/permission"
        return self.inject("GET", path, status=status, body=body, times=times)

    def inject_pull_lookup_failure(
        self, status: int, *, full_name: str | None = None, times: int | None = 1
    ) -> Fault:
        """``status`` for the next ``times`` pull request listings (``GET .../pulls``, e.g. the
        lookup by ``head=``) of ``full_name`` (any repository when None); ``times=None``: every
        one."""
        repo = re.escape(full_name) if full_name is not None else "[^/]+/[^/]+"
        return self.inject("GET", rf"/repos/{repo}/pulls", status=status, times=times)

    def before_push(self, callback: Callable[[], None], *, times: int = 1) -> None:
        """Run ``callback`` before each of the next ``times`` pushes reach git (see
        :meth:`tests.support.git_http.GitHttpServer.before_push`)."""
        self.git.before_push(callback, times=times)

    def _fault_body(self, status: int, headers: dict[str, str]) -> Any:
        return error(
            {
                403: "Forbidden",
                429: "Too Many Requests",
                500: "Server Error",
                502: "Bad Gateway",
                503: "Service Unavailable",
                504: "Gateway Timeout",
            }.get(status, "Injected fault")
        )
