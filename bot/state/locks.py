"""A lock per repository around fetch-build-push (and, between, the change engine's lookup of
the open pull request on the branch it planned), shared by every worker on every host.

A holder takes the lock with a token of its own and a time to live: a worker killed while
holding it leaves a lock that expires by itself, and releasing deletes the lock only while it
still holds that holder's token, so a holder that outlived its lock never releases the next
holder's. The lock only serializes the bot's own pushes; what makes a push safe is its lease
(:func:`bot.git.push.push_branch`), which still refuses a branch that moved meanwhile.
"""

from __future__ import annotations

import contextlib
import logging
import math
import secrets
import threading
import time
from collections.abc import Callable, Iterator

import redis

from bot.state import keys
from bot.state.base import LockTimeout as LockTimeout  # re-exported: raised here
from bot.state.base import RepoLock as RepoLock
from bot.state.base import repo_lock_key as repo_lock_key

log = logging.getLogger("ichor.locks")

LOCK_PREFIX = keys.REPO_LOCK_PREFIX
_FIRST_POLL = 0.02  # seconds between tries, doubled up to _LAST_POLL
_LAST_POLL = 0.25
# Delete KEYS[1] only if it still holds this holder's token ARGV[1].
_RELEASE_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class _PollingLock:
    """Try, and sleep between tries, until the lock is taken or ``wait`` has passed."""

    def __init__(self, *, clock: Callable[[], float], sleep: Callable[[float], None]) -> None:
        self._clock = clock
        self._sleep = sleep

    @contextlib.contextmanager
    def hold(self, key: str, *, ttl: float, wait: float) -> Iterator[None]:
        if not ttl > 0 or not wait >= 0:
            raise ValueError(f"a lock needs ttl > 0 and wait >= 0 (got {ttl!r}, {wait!r})")
        token = secrets.token_hex(16)
        deadline = self._clock() + wait
        delay = _FIRST_POLL
        while not self._acquire(key, token, ttl):
            remaining = deadline - self._clock()
            if remaining <= 0:
                raise LockTimeout(f"the lock {key} stayed held by another job for {wait:g}s")
            self._sleep(min(delay, remaining))
            delay = min(delay * 2, _LAST_POLL)
        try:
            yield
        finally:
            if not self._release(key, token):
                # The lease still guards the push; a ttl this short only stops serializing.
                log.warning("lock %s expired while held (ttl %gs): raise its ttl", key, ttl)

    def _acquire(self, key: str, token: str, ttl: float) -> bool:
        raise NotImplementedError

    def _release(self, key: str, token: str) -> bool:
        """Delete the lock if ``token`` still holds it; whether it did."""
        raise NotImplementedError


class RedisRepoLock(_PollingLock):
    """``SET key token NX PX ttl``, released by a compare-and-delete script; ``clock`` and
    ``sleep`` pace the waiting only (the expiry is Redis's own)."""

    def __init__(
        self,
        connection: redis.Redis,
        *,
        prefix: str = LOCK_PREFIX,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(clock=clock, sleep=sleep)
        self._redis = connection
        self._prefix = prefix
        self._release_script = connection.register_script(_RELEASE_LUA)

    def _acquire(self, key: str, token: str, ttl: float) -> bool:
        milliseconds = max(1, math.ceil(ttl * 1000))
        return bool(self._redis.set(self._prefix + key, token, nx=True, px=milliseconds))

    def _release(self, key: str, token: str) -> bool:
        try:
            return bool(self._release_script(keys=[self._prefix + key], args=[token]))
        except redis.exceptions.RedisError as exc:
            # Raising here would hide what the block raised; the lock expires by itself.
            log.warning("could not release lock %s (it expires by itself): %s", key, exc)
            return True


class MemoryRepoLock(_PollingLock):
    """The same promises within one process (the in-process queue, tests)."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(clock=clock, sleep=sleep)
        self._held: dict[str, tuple[str, float]] = {}  # key -> (token, expires at)
        self._mutex = threading.Lock()

    def _acquire(self, key: str, token: str, ttl: float) -> bool:
        with self._mutex:
            now = self._clock()
            current = self._held.get(key)
            if current is not None and current[1] > now:
                return False
            self._held[key] = (token, now + ttl)
            return True

    def _release(self, key: str, token: str) -> bool:
        with self._mutex:
            current = self._held.get(key)
            if current is None or current[0] != token:
                return False
            del self._held[key]
            return current[1] > self._clock()
