"""Fault injection in the fake GitLab: as every fake's (``inject``), plus ``after=True``, the
request takes effect and *then* the fault answers (a lost response), and GitLab's answers for
an injected status (a throttle's plain text, else ``{"message": "<status> <phrase>"}``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, cast

from tests.fakeforge import base
from tests.fakeforge.gitlab.core import GitLabCore
from tests.fakeforge.gitlab.records import Fault, now
from tests.fakeforge.gitlab.routes import phrase


class Faults(GitLabCore):
    def inject(
        self,
        method: str | None = None,
        path: str = r".*",
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        delay: float = 0.0,
        times: int | None = 1,
        after: bool = False,
    ) -> Fault:
        """Fail the next ``times`` API requests whose method and raw path (regex, full match,
        no query) match. ``body`` defaults to GitLab's for ``status``; with ``after`` the
        request takes effect first (a lost response)."""
        with self._lock:  # no request takes the fault before it knows ``after``
            fault = cast(
                Fault,
                super().inject(
                    method,
                    path,
                    status=status,
                    headers=headers,
                    body=body,
                    delay=delay,
                    times=times,
                ),
            )
            fault.after = after
        return fault

    def inject_rate_limit(
        self, method: str | None = None, path: str = r".*", *, retry_after: int = 1, times: int = 1
    ) -> Fault:
        """429 with GitLab's rate limit headers (``Retry-After`` and ``RateLimit-*``)."""
        reset = int(now()) + retry_after
        return self.inject(
            method,
            path,
            status=429,
            headers={
                "retry-after": str(retry_after),
                "ratelimit-name": "throttle_authenticated_api",
                "ratelimit-limit": "60",
                "ratelimit-observed": "61",
                "ratelimit-remaining": "0",
                "ratelimit-reset": str(reset),
                "ratelimit-resettime": datetime.fromtimestamp(reset, UTC).strftime(
                    "%a, %d %b %Y %H:%M:%S GMT"
                ),
            },
            times=times,
        )

    def _answers_after(self, fault: base.Fault) -> bool:
        return isinstance(fault, Fault) and fault.after

    def _fault_body(self, status: int, headers: dict[str, str]) -> Any:
        if status == 429:
            headers.setdefault("content-type", "text/plain")
            return "Retry later\n"  # GitLab's throttle answers plain text
        return {"message": f"{status} {phrase(status)}".strip()}
