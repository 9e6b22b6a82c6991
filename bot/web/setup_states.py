"""The ``state`` values of the manifest flow: issued with the setup page, usable once, briefly.

A state ties GitHub's redirect back to the page (and the browser) that started it, so a link to
the callback made by someone else — for an App they own, whose key they know — is refused.

A pending state is kept by the browser that asked for it, not by the server: the state is a
random nonce and its time of issue, signed with a key of this process, and the browser holds
the same value in a cookie. Opening the page costs the server no memory, so no number of
openings by anyone can push out the state of the person who is on GitHub creating an App (a
global table of pending states once could). The server remembers only the states already
spent, until they would have expired anyway; that memory is capped, and forgetting an old
spent state lets through at most its own browser's second try, which GitHub's single-use code
refuses anyway. The key and the spent states are kept by a store of ``bot/state/setup.py``: in
this process's memory (a restart, like an expiry, ends the flow), or on Redis, shared by every
web replica, so the callback may reach another replica than the page (then the clock is the
wall clock, the same for all of them).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import struct
from collections.abc import Callable
from dataclasses import dataclass

from bot.state.setup import DEFAULT_SPENT_CAPACITY, MemorySetupStore, SetupStore

DEFAULT_TTL = 15 * 60.0  # seconds; GitHub gives the whole flow an hour
_NONCE = 16
_ISSUED = struct.Struct(">d")
_MAC = 16  # bytes of HMAC-SHA256 kept: 128 bits, unforgeable within a state's 15 minutes
_SIZE = _NONCE + _ISSUED.size + _MAC


@dataclass(frozen=True, slots=True)
class PendingSetup:
    issued_at: float


class SetupStates:
    def __init__(
        self,
        clock: Callable[[], float],
        *,
        ttl: float = DEFAULT_TTL,
        store: SetupStore | None = None,
        spent_capacity: int = DEFAULT_SPENT_CAPACITY,
    ) -> None:
        self._clock = clock
        self._ttl = ttl
        self._store = (
            store if store is not None else MemorySetupStore(clock, capacity=spent_capacity)
        )

    @property
    def ttl(self) -> float:
        return self._ttl

    def issue(self) -> str:
        """A new state: URL-safe, unguessable, and nothing kept."""
        body = secrets.token_bytes(_NONCE) + _ISSUED.pack(self._clock())
        raw = body + self._mac(body)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    def consume(self, state: str, presented: str | None) -> PendingSetup | None:
        """The setup ``state`` names, once; None when forged, used, expired or when the
        browser's copy (``presented``, from its cookie) is not the same value."""
        now = self._clock()
        raw = _decode(state)
        if raw is None or len(raw) != _SIZE:
            return None
        body, mac = raw[:-_MAC], raw[-_MAC:]
        if not hmac.compare_digest(mac, self._mac(body)):
            return None
        nonce = body[:_NONCE]
        (issued_at,) = _ISSUED.unpack(body[_NONCE:])
        if not 0 <= now - issued_at < self._ttl:
            return None
        # Spent whatever happens next: a state refused for the wrong browser is not retried.
        if not self._store.spend(nonce, issued_at + self._ttl - now):
            return None
        if presented is None or not hmac.compare_digest(state.encode(), presented.encode()):
            return None
        return PendingSetup(issued_at)

    def __len__(self) -> int:
        """How many spent states this process remembers (in memory; 0 on Redis)."""
        return len(self._store) if isinstance(self._store, MemorySetupStore) else 0

    def _mac(self, body: bytes) -> bytes:
        return hmac.new(self._store.signing_key(), body, hashlib.sha256).digest()[:_MAC]


def _decode(state: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(state + "=" * (-len(state) % 4))
    except (binascii.Error, ValueError):
        return None
