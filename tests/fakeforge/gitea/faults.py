"""Faults of Gitea's own kinds, on top of :meth:`tests.fakeforge.base.FakeForgeBase.inject`."""

from __future__ import annotations

import re

from tests.fakeforge.base import Fault
from tests.fakeforge.gitea.repos import FORBIDDEN_PERMISSION
from tests.fakeforge.gitea.state import API_PREFIX, GiteaState, error


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
