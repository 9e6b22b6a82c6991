"""Where the GitHub App manifest flow keeps what it must (bot/web/setup_states.py): the key
its states are signed with, and the states already spent.

In memory, a process's own: the embedded default and a single web process. On Redis, shared:
any web replica verifies a state another issued and spends it once for all of them, so the
callback may reach any replica behind a load balancer.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

import redis

from bot.errors import IchorError
from bot.state import keys as key_names

KEY_BYTES = 32
DEFAULT_SPENT_CAPACITY = 10_000  # spent states remembered in memory; a few dozen bytes each


class SetupStoreUnavailable(IchorError):
    """The shared store could not be reached: the flow cannot go on now."""


class SetupStore(Protocol):
    def signing_key(self) -> bytes: ...

    def spend(self, nonce: bytes, for_seconds: float) -> bool:
        """Spend ``nonce`` for ``for_seconds`` (until its state would have expired); False when
        it was spent already."""
        ...


class MemorySetupStore:
    """This process's own: a key made at start (a restart ends every pending flow) and the
    spent nonces, capped, forgotten once they would have expired."""

    def __init__(
        self, clock: Callable[[], float], *, capacity: int = DEFAULT_SPENT_CAPACITY
    ) -> None:
        self._clock = clock
        self._capacity = capacity
        self._key = secrets.token_bytes(KEY_BYTES)
        self._spent: OrderedDict[bytes, float] = OrderedDict()  # nonce -> when it expires
        self._lock = threading.Lock()

    def signing_key(self) -> bytes:
        return self._key

    def spend(self, nonce: bytes, for_seconds: float) -> bool:
        with self._lock:
            now = self._clock()
            self._forget_expired(now)
            if nonce in self._spent:
                return False
            while len(self._spent) >= self._capacity:
                self._spent.popitem(last=False)
            self._spent[nonce] = now + for_seconds
            return True

    def __len__(self) -> int:
        """How many spent states are remembered."""
        with self._lock:
            self._forget_expired(self._clock())
            return len(self._spent)

    def _forget_expired(self, now: float) -> None:
        # Spent in order of consumption, close to the order of expiry: stop at the first that
        # is still live, the rest goes on a later call.
        while self._spent:
            nonce, expires = next(iter(self._spent.items()))
            if now < expires:
                break
            del self._spent[nonce]


class RedisSetupStore:
    """Shared by every web process on one Redis (``namespace``: the queue's name). The key is
    made by whichever process asks first (``SET NX``) and kept; a spent nonce is a key that
    expires when the state would have (``SET NX PX``), so nothing needs cleaning."""

    def __init__(self, url: str, namespace: str, *, timeout: float = 2.0) -> None:
        self._redis = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self._namespace = namespace
        self._key: bytes | None = None

    def signing_key(self) -> bytes:
        if self._key is None:
            name = key_names.setup_key(self._namespace)
            try:
                self._redis.set(name, secrets.token_bytes(KEY_BYTES), nx=True)
                found = self._redis.get(name)
            except redis.exceptions.RedisError as exc:
                raise SetupStoreUnavailable(f"Redis: {exc}") from exc
            if not isinstance(found, bytes) or len(found) != KEY_BYTES:
                raise SetupStoreUnavailable(f"{name} does not hold a signing key")
            self._key = found
        return self._key

    def spend(self, nonce: bytes, for_seconds: float) -> bool:
        ttl_ms = max(1, int(for_seconds * 1000))
        name = key_names.setup_spent(self._namespace, nonce.hex())
        try:
            return bool(self._redis.set(name, b"1", nx=True, px=ttl_ms))
        except redis.exceptions.RedisError as exc:
            raise SetupStoreUnavailable(f"Redis: {exc}") from exc

    def close(self) -> None:
        self._redis.close()
