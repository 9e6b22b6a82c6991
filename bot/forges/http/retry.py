"""Retry a forge call that failed transiently: exponential backoff with jitter.

Only :class:`bot.errors.TransientForgeError` is retried; everything else propagates at once.
When the server says how long to wait (``retry_after``: a ``Retry-After`` header or a rate
limit's reset) that wait is used exactly, with no jitter, because waking earlier only earns
another refusal. A wait longer than ``max_delay`` is not slept at all: the error propagates
with its ``retry_after`` intact, so the job queue can reschedule the job instead of a worker
sitting idle for up to an hour until a rate limit resets.
"""

from __future__ import annotations

import datetime
import email.utils
import random
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

from bot.errors import TransientForgeError

T = TypeVar("T")

# The rate-limit header pairs forges send: GitHub's, and the IETF draft's GitLab uses.
_RATE_LIMITS = (
    ("x-ratelimit-remaining", "x-ratelimit-reset"),
    ("ratelimit-remaining", "ratelimit-reset"),
)


def server_wait(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds the server asks us to wait, from ``now`` (epoch seconds): ``Retry-After`` as
    delta-seconds or an HTTP date (proxies send either), else an exhausted rate limit's reset
    time. None when the answer names no wait (or junk): then the caller backs off."""
    folded = {k.lower(): v for k, v in headers.items()}
    if "retry-after" in folded:
        return _retry_after(folded["retry-after"].strip(), now)
    for remaining, reset in _RATE_LIMITS:
        # GitLab may send the reset alone on the answer that exhausts the limit.
        if reset in folded and folded.get(remaining, "0").strip() == "0":
            try:
                return max(0.0, float(folded[reset]) - now)
            except ValueError:
                return None
    return None


def _retry_after(value: str, now: float) -> float | None:
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return max(0.0, when.timestamp() - now)


def backoff_delay(retry: int, *, base_delay: float, max_delay: float) -> float:
    """The wait before retry number ``retry`` (0-based) when the server named none.

    "Equal jitter": half the exponential step is fixed and half random, so concurrent workers
    spread out while each still backs off at least ``base_delay * 2**retry / 2``.
    """
    step = min(max_delay, base_delay * 2.0**retry)
    # Jitter spreads retries out; it protects nothing, so a non-cryptographic source is right.
    return step / 2 + random.uniform(0, step / 2)  # noqa: S311


def with_retries(
    call: Callable[[], T],
    *,
    attempts: int = 5,
    base_delay: float = 0.5,
    max_delay: float = 60.0,
    sleep: Callable[[float], None] = time.sleep,
    on_retry: Callable[[TransientForgeError, float], None] | None = None,
) -> T:
    """``call()``, retrying a :class:`TransientForgeError` up to ``attempts`` times in all.

    The last error propagates unchanged once the attempts are spent, or at once when its
    ``retry_after`` exceeds ``max_delay``. ``on_retry(error, delay)`` runs before each sleep
    (for logging). ``call`` is invoked afresh on every attempt, so it may re-read credentials.
    """
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    retry = 0
    while True:
        try:
            return call()
        except TransientForgeError as exc:
            if retry + 1 >= attempts:
                raise
            if exc.retry_after is not None:
                if exc.retry_after > max_delay:
                    raise
                delay = max(0.0, exc.retry_after)
            else:
                delay = backoff_delay(retry, base_delay=base_delay, max_delay=max_delay)
            if on_retry is not None:
                on_retry(exc, delay)
            sleep(delay)
            retry += 1
