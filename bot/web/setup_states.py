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
refuses anyway. The key lives in memory: a restart, like an expiry, ends the flow.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import struct
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_TTL = 15 * 60.0  # seconds; GitHub gives the whole flow an hour
DEFAULT_SPENT_CAPACITY = 10_000  # spent states remembered; each is a few dozen bytes
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
        spent_capacity: int = DEFAULT_SPENT_CAPACITY,
        key: bytes | None = None,
    ) -> None:
        self._clock = clock
        self._ttl = ttl
        self._spent_capacity = spent_capacity
        self._key = key if key is not None else secrets.token_bytes(32)
        self._spent: OrderedDict[bytes, float] = OrderedDict()  # nonce -> when it expires

    @property
    def ttl(self) -> float:
        return self._ttl

    def issue(self) -> str:
        """A new state: URL-safe, unguessable, and nothing kept on the server."""
        body = secrets.token_bytes(_NONCE) + _ISSUED.pack(self._clock())
        raw = body + self._mac(body)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    def consume(self, state: str, presented: str | None) -> PendingSetup | None:
        """The setup ``state`` names, once; None when forged, used, expired or when the
        browser's copy (``presented``, from its cookie) is not the same value."""
        now = self._clock()
        self._forget_expired(now)
        raw = _decode(state)
        if raw is None or len(raw) != _SIZE:
            return None
        body, mac = raw[:-_MAC], raw[-_MAC:]
        if not hmac.compare_digest(mac, self._mac(body)):
            return None
        nonce = body[:_NONCE]
        (issued_at,) = _ISSUED.unpack(body[_NONCE:])
        if not 0 <= now - issued_at < self._ttl or nonce in self._spent:
            return None
        # Spent whatever happens next: a state refused for the wrong browser is not retried.
        self._spend(nonce, issued_at + self._ttl)
        if presented is None or not hmac.compare_digest(state.encode(), presented.encode()):
            return None
        return PendingSetup(issued_at)

    def __len__(self) -> int:
        """How many spent states are remembered."""
        return len(self._spent)

    def _mac(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()[:_MAC]

    def _spend(self, nonce: bytes, expires: float) -> None:
        while len(self._spent) >= self._spent_capacity:
            self._spent.popitem(last=False)
        self._spent[nonce] = expires

    def _forget_expired(self, now: float) -> None:
        # Spent in order of consumption, which is close to, not exactly, the order of expiry:
        # stop at the first that is still live, the rest goes on a later call.
        while self._spent:
            nonce, expires = next(iter(self._spent.items()))
            if now < expires:
                break
            del self._spent[nonce]


def _decode(state: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(state + "=" * (-len(state) % 4))
    except (binascii.Error, ValueError):
        return None
