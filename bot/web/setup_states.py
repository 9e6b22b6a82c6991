"""The ``state`` values of the manifest flow: issued with the setup page, usable once, briefly.

A state ties GitHub's redirect back to the page (and the browser) that started it, so a link to
the callback made by someone else — for an App they own, whose key they know — is refused.
They live in the web process's memory: the flow is one person's, once, and a state that
outlives a restart would only widen the window.
"""

from __future__ import annotations

import hmac
import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_TTL = 15 * 60.0  # seconds; GitHub gives the whole flow an hour
DEFAULT_CAPACITY = 100  # pending states; a page reloaded in a loop cannot grow memory


@dataclass(frozen=True, slots=True)
class PendingSetup:
    base_url: str  # where the manifest said the bot is: the callback shows it again
    issued_at: float


class SetupStates:
    def __init__(
        self,
        clock: Callable[[], float],
        *,
        ttl: float = DEFAULT_TTL,
        capacity: int = DEFAULT_CAPACITY,
    ) -> None:
        self._clock = clock
        self._ttl = ttl
        self._capacity = capacity
        self._pending: OrderedDict[str, PendingSetup] = OrderedDict()

    @property
    def ttl(self) -> float:
        return self._ttl

    def issue(self, base_url: str) -> str:
        now = self._clock()
        self._expire(now)
        while len(self._pending) >= self._capacity:
            self._pending.popitem(last=False)  # the oldest goes first
        state = secrets.token_urlsafe(32)
        self._pending[state] = PendingSetup(base_url, now)
        return state

    def consume(self, state: str, presented: str | None) -> PendingSetup | None:
        """The setup ``state`` names, once; None when unknown, used, expired or when the
        browser's copy (``presented``, from its cookie) is not the same value."""
        now = self._clock()
        self._expire(now)
        pending = self._pending.pop(state, None)
        if pending is None or presented is None:
            return None
        if not hmac.compare_digest(state.encode(), presented.encode()):
            return None
        return pending

    def __len__(self) -> int:
        return len(self._pending)

    def _expire(self, now: float) -> None:
        # Insertion order is issue order, so the expired ones are at the front.
        while self._pending:
            state, pending = next(iter(self._pending.items()))
            if now - pending.issued_at < self._ttl:
                break
            del self._pending[state]
