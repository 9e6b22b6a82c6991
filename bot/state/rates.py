"""The rate budget: what each forge last said of each rate limit the bot spends (a GitHub App
installation, the App itself, a GitLab or Gitea token), kept where every process reads it.

The request seam reads each answer's rate-limit headers (:mod:`bot.forges.http.seam`); a
worker's adapters hand them to a :class:`RateRecorder`, which writes them here, and work that
can wait (the reconciler, redeliveries, line comments) reads them to step aside while a limit
runs low (:meth:`RateBudget.low`). The web process shows them on the status page and in
``/metrics``. Redis when the bot runs on it, else a file beside the history. Every method is
blocking: the web process calls them off its event loop.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import redis

from bot.state import keys
from bot.state.history import clip_text, write_atomic

log = logging.getLogger("ichor.rates")

BUDGET_CAP = 500  # buckets kept (installations); the least recently seen go first
# A recorder writes a bucket again when its count moved this share of the limit, or it resets,
# or this many seconds passed: a store write per forge request would double the round trips.
WRITE_STEP = 0.01
WRITE_EVERY = 10.0


@dataclass(frozen=True, slots=True)
class RateBudget:
    """One rate limit as the forge last reported it: ``remaining`` of ``limit`` requests until
    ``reset`` (epoch seconds), seen at ``at``."""

    forge: str
    bucket: str  # "installation 42", "app", or "" for a forge's one token
    remaining: int
    limit: int | None
    reset: float | None
    at: float

    @property
    def key(self) -> str:
        return f"{self.forge}|{self.bucket}"

    @property
    def shown(self) -> str:
        """The bucket as people read it."""
        return self.bucket or "token"

    def low(self, reserve: float, now: float) -> bool:
        """Whether work that can wait should step aside: fewer than ``reserve`` (a share of the
        limit) requests left in a window that has not reset yet. Unknown limits count as low
        only once spent."""
        if self.reset is not None and now >= self.reset:
            return False  # the window reset since: the budget is back
        if self.limit is None or self.limit <= 0:
            return self.remaining <= 0
        return self.remaining < self.limit * reserve

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RateBudget:
        limit, reset = data.get("limit"), data.get("reset")
        return cls(
            clip_text(data["forge"], 40),
            clip_text(data.get("bucket", ""), 100),
            int(data["remaining"]),
            None if limit is None else int(limit),
            None if reset is None else float(reset),
            float(data["at"]),
        )


def _parsed(raw: bytes | str | None) -> RateBudget | None:
    if raw is None:
        return None
    try:
        return RateBudget.from_dict(json.loads(raw))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


class RateStore(Protocol):
    def put(self, budget: RateBudget) -> None: ...

    def budget(self, forge: str, bucket: str) -> RateBudget | None: ...

    def budgets(self) -> list[RateBudget]:
        """Every bucket kept, by forge and bucket."""
        ...

    def close(self) -> None: ...


def _sorted(found: Sequence[RateBudget | None]) -> list[RateBudget]:
    return sorted((b for b in found if b is not None), key=lambda b: (b.forge, b.bucket))


class RedisRates:
    """A hash under the history's prefix: ``forge|bucket`` → the budget as JSON."""

    def __init__(self, url: str, namespace: str = "ichor", *, timeout: float = 2.0) -> None:
        self.redis = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self.key = keys.rate_budgets(namespace)

    def put(self, budget: RateBudget) -> None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(self.key, budget.key, budget.to_json())
        pipe.hlen(self.key)
        if int(pipe.execute()[1]) > BUDGET_CAP:
            oldest = sorted(self.budgets(), key=lambda b: b.at)[: -BUDGET_CAP or None]
            if oldest:
                self.redis.hdel(self.key, *(b.key for b in oldest))

    def budget(self, forge: str, bucket: str) -> RateBudget | None:
        raw: bytes | None = self.redis.hget(self.key, f"{forge}|{bucket}")  # type: ignore[assignment]
        return _parsed(raw)

    def budgets(self) -> list[RateBudget]:
        raw: dict[bytes, bytes] = self.redis.hgetall(self.key)  # type: ignore[assignment]
        return _sorted([_parsed(v) for v in raw.values()])

    def close(self) -> None:
        self.redis.close()


class FileRates:
    """The same in one JSON file under the history directory, rewritten whole (it is small)."""

    def __init__(self, root: Path) -> None:
        self.path = root / "rates.json"
        self._lock = threading.Lock()

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def put(self, budget: RateBudget) -> None:
        with self._lock:
            data = self._load()
            data[budget.key] = asdict(budget)
            if len(data) > BUDGET_CAP:
                kept = sorted(data.items(), key=lambda item: float(item[1].get("at", 0)))
                data = dict(kept[-BUDGET_CAP:])
            write_atomic(self.path, json.dumps(data, sort_keys=True))

    def budget(self, forge: str, bucket: str) -> RateBudget | None:
        raw = self._load().get(f"{forge}|{bucket}")
        return _parsed(json.dumps(raw)) if raw is not None else None

    def budgets(self) -> list[RateBudget]:
        return _sorted([_parsed(json.dumps(v)) for v in self._load().values()])

    def close(self) -> None:
        return None


def rate_store(redis_url: str | None, data_dir: Path, namespace: str) -> RateStore:
    """Where the history is: Redis when the bot runs on it, else the data dir."""
    if redis_url:
        return RedisRates(redis_url, namespace)
    return FileRates(data_dir / "history")


class RateRecorder:
    """What a worker's adapters report each rate limit to (one per forge): kept in the store
    when it moved enough to matter, never failing the request that carried it."""

    def __init__(
        self, store: RateStore, forge: str, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self.forge = forge
        self.clock = clock
        self._written: dict[str, RateBudget] = {}
        self._lock = threading.Lock()

    def saw(self, bucket: str, remaining: int, limit: int | None, reset: float | None) -> None:
        now = self.clock()
        budget = RateBudget(self.forge, bucket, remaining, limit, reset, now)
        with self._lock:
            before = self._written.get(bucket)
            if before is not None and not _worth_writing(before, budget):
                return
            self._written[bucket] = budget
        try:
            self.store.put(budget)
        except Exception as exc:  # the request succeeded; the page shows an older number
            log.debug("could not keep the %s rate limit of %r: %s", self.forge, bucket, exc)
            with self._lock:
                self._written.pop(bucket, None)


def _worth_writing(before: RateBudget, now: RateBudget) -> bool:
    step = max(1, int((now.limit or 0) * WRITE_STEP))
    return (
        abs(before.remaining - now.remaining) >= step
        or before.reset != now.reset
        or before.limit != now.limit
        or now.at - before.at >= WRITE_EVERY
    )
