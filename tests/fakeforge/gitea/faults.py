"""Faults of Gitea's own kinds, on top of :meth:`tests.fakeforge.base.FakeForgeBase.inject`."""

from __future__ import annotations

import re
from collections.abc import Callable

from tests.fakeforge.base import Fault
from tests.fakeforge.gitea.repos import FORBIDDEN_PERMISSION
from tests.fakeforge.gitea.state import API_PREFIX, GiteaState, error
from tests.fakeforge.httpserver import Request, Response


class Faults(GiteaState):
    """Failures a test asks for by what they mean, not by path."""

    def fail_permission_reads(
        self,
        full_name: str,
        status: int = 503,
        *,
        user: str | None = None,
        times: int | None = None,
    ) -> Fault:
        """``GET .../collaborators/{user}/permission`` answers ``status`` (any user when
        ``user`` is None), ``times`` times (None: until :meth:`clear_faults`). A 403 carries
        Gitea's message for a token that is no repository admin; a 5xx, an instance that is
        down or overloaded."""
        who = re.escape(user) if user is not None else "[^/]+"
        path = f"{API_PREFIX}/repos/{re.escape(full_name)}/collaborators/{who}/permission"
        body = error(status, FORBIDDEN_PERMISSION).body if status == 403 else None
        return self.inject("GET", path, status=status, body=body, times=times)

    def before_push(self, callback: Callable[[], None], *, times: int = 1) -> None:
        """Run ``callback`` before each of the next ``times`` pushes (a POST to
        ``git-receive-pack``) reaches git: after the pusher read the refs, before the server
        updates them, as when a person moves a branch in between."""
        with self._lock:
            self._before_pushes.extend([callback] * times)

    def _proxy_git(self, req: Request) -> Response:
        callback = None
        if req.method == "POST" and req.path.endswith("/git-receive-pack"):
            with self._lock:
                callback = self._before_pushes.pop(0) if self._before_pushes else None
        if callback is not None:
            callback()
        return super()._proxy_git(req)
