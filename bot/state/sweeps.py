"""What the sweeps keep (design.md 7): the reconciler's last look at each repository and what it
remembers of it between runs, each forge's last sweep, their counts for ``/metrics``, and the
GitHub deliveries asked for again lately.

The workers write (the sweep is one of their jobs), the web process reads: Redis, which the
sweep needs (it runs only beside the Redis queue); an in-memory store stands in for tests and
for a bot without Redis, where no sweep runs. Capped: a bot reaching many repositories keeps
the most recently reconciled. Every method is blocking: the web process calls them off its
event loop.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import redis

from bot.forges.base import PullRequestRef
from bot.state import keys
from bot.state.history import clip_text

REPOSITORY_CAP = 1000  # repositories whose last look (and listing) is kept
# What /metrics counts (the label values, so it stays bounded whatever is stored).
COUNTED = ("queued", "deferred", "failed", "redelivered", "redelivery-refused")


@dataclass(frozen=True, slots=True)
class RepoReconciled:
    """The reconciler's last look at one repository: its open pull requests, how many heads
    had their result (``done``), were left to a job that has them (``waiting``), got a check
    queued now (``queued``) or must wait for a later run (``left``); ``unchanged``: GitHub
    said the listing had not changed (a 304); ``note``: why it was not looked at, or what
    went wrong."""

    at: float
    forge: str
    repository: str
    open: int = 0
    done: int = 0
    waiting: int = 0
    queued: int = 0
    left: int = 0
    unchanged: bool = False
    note: str = ""

    @property
    def key(self) -> str:
        return f"{self.forge}|{self.repository}"

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RepoReconciled:
        return cls(
            float(data["at"]),
            clip_text(data["forge"], 40),
            clip_text(data["repository"], 400),
            open=int(data.get("open", 0)),
            done=int(data.get("done", 0)),
            waiting=int(data.get("waiting", 0)),
            queued=int(data.get("queued", 0)),
            left=int(data.get("left", 0)),
            unchanged=bool(data.get("unchanged", False)),
            note=clip_text(data.get("note", "")),
        )


@dataclass(frozen=True, slots=True)
class Listing:
    """What the reconciler keeps of a repository between runs: its last listing of open pull
    requests with the tag to ask with next (GitHub's ETag: when nothing changed, this listing
    is used again), and the heads found waiting on a job, each since when."""

    tag: str | None = None
    pulls: tuple[PullRequestRef, ...] = ()
    waiting: dict[int, tuple[str, float]] = field(default_factory=dict)  # number → (sha, since)

    def to_json(self) -> str:
        return json.dumps(
            {
                "tag": self.tag,
                "pulls": [_pull_to_dict(p) for p in self.pulls],
                "waiting": {str(n): [sha, since] for n, (sha, since) in self.waiting.items()},
            },
            sort_keys=True,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Listing:
        tag = data.get("tag")
        waiting = data.get("waiting") or {}
        return cls(
            None if tag is None else clip_text(tag, 200),
            tuple(_pull_from_dict(p) for p in data.get("pulls") or []),
            {int(n): (clip_text(v[0], 64), float(v[1])) for n, v in waiting.items()},
        )


_PULL_FIELDS = ("head_sha", "base_sha", "base_ref", "head_ref", "author")


def _pull_to_dict(pull: PullRequestRef) -> dict[str, Any]:
    values = {name: getattr(pull, name) for name in _PULL_FIELDS}
    return {"number": pull.number, "url": pull.url, "from_fork": pull.from_fork, **values}


def _pull_from_dict(data: dict[str, Any]) -> PullRequestRef:
    optional = {
        name: None if data.get(name) is None else clip_text(data[name], 400)
        for name in _PULL_FIELDS
    }
    return PullRequestRef(
        int(data["number"]),
        clip_text(data.get("url", ""), 400),
        from_fork=bool(data.get("from_fork")),
        **optional,
    )


@dataclass(frozen=True, slots=True)
class SweepRun:
    """One forge's sweep: repositories listed, looked at, left for the rate budget or for
    lack of time, checks queued; GitHub's failed deliveries found and asked for again (and
    why the others were not); what went wrong, if anything did."""

    at: float
    forge: str
    repositories: int = 0
    reconciled: int = 0
    deferred: int = 0
    queued: int = 0
    failed_deliveries: int = 0
    redelivered: int = 0
    not_redelivered: dict[str, int] = field(default_factory=dict)
    problem: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SweepRun:
        left = data.get("not_redelivered") or {}
        return cls(
            float(data["at"]),
            clip_text(data["forge"], 40),
            repositories=int(data.get("repositories", 0)),
            reconciled=int(data.get("reconciled", 0)),
            deferred=int(data.get("deferred", 0)),
            queued=int(data.get("queued", 0)),
            failed_deliveries=int(data.get("failed_deliveries", 0)),
            redelivered=int(data.get("redelivered", 0)),
            not_redelivered={clip_text(k, 40): int(v) for k, v in list(left.items())[:10]},
            problem=clip_text(data.get("problem", "")),
        )


def _parsed(raw: bytes | str | None, kind: Any) -> Any:
    if raw is None:
        return None
    try:
        return kind.from_dict(json.loads(raw))
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None


class SweepStore(Protocol):
    def record_repo(self, record: RepoReconciled) -> None: ...

    def repos(self, limit: int = 50) -> list[RepoReconciled]:
        """The latest look at each repository, newest first."""
        ...

    def last_reconciled(self, forge: str, names: Sequence[str]) -> dict[str, float]:
        """When each of ``names`` was last looked at (those never looked at are absent)."""
        ...

    def listing(self, forge: str, repository: str) -> Listing | None: ...

    def keep_listing(self, forge: str, repository: str, listing: Listing) -> None: ...

    def record_run(self, run: SweepRun) -> None: ...

    def runs(self) -> list[SweepRun]:
        """Each forge's last sweep, by forge."""
        ...

    def count(self, forge: str, what: str, n: int = 1) -> None: ...

    def counts(self) -> dict[tuple[str, str], int]:
        """(forge, what) → how many, ``what`` one of :data:`COUNTED`."""
        ...

    def asked(self, guids: Iterable[str]) -> set[str]:
        """Which of ``guids`` were asked for again lately."""
        ...

    def remember_asked(self, guid: str, seconds: int) -> None: ...

    def close(self) -> None: ...


def _counted(raw: dict[str, int]) -> dict[tuple[str, str], int]:
    found = {}
    for name, count in raw.items():
        forge, _, what = name.partition("|")
        if what in COUNTED:
            found[(forge, what)] = count
    return found


class RedisSweeps:
    """Hashes under the history's prefix (so whatever clears a queue's history clears these
    too), and a short-lived key per GitHub delivery asked for again."""

    def __init__(self, connection: redis.Redis, namespace: str = "ichor") -> None:
        self.redis = connection
        self.keys = (
            keys.reconciled(namespace),
            keys.reconcile_listings(namespace),
            keys.sweep_runs(namespace),
            keys.sweep_counts(namespace),
        )

    @classmethod
    def from_url(cls, url: str, namespace: str = "ichor", *, timeout: float = 2.0) -> RedisSweeps:
        connection = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        return cls(connection, namespace)

    def record_repo(self, record: RepoReconciled) -> None:
        reconciled, listings, _, _ = self.keys
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(reconciled, record.key, record.to_json())
        pipe.hlen(reconciled)
        if int(pipe.execute()[1]) > REPOSITORY_CAP:
            oldest = sorted(self._all(), key=lambda r: r.at)[:-REPOSITORY_CAP]
            if oldest:
                self.redis.hdel(reconciled, *(r.key for r in oldest))
                self.redis.hdel(listings, *(r.key for r in oldest))

    def _all(self) -> list[RepoReconciled]:
        raw: dict[bytes, bytes] = self.redis.hgetall(self.keys[0])  # type: ignore[assignment]
        found = (_parsed(v, RepoReconciled) for v in raw.values())
        return [r for r in found if r is not None]

    def repos(self, limit: int = 50) -> list[RepoReconciled]:
        return sorted(self._all(), key=lambda r: r.at, reverse=True)[:limit]

    def last_reconciled(self, forge: str, names: Sequence[str]) -> dict[str, float]:
        if not names:
            return {}
        raw: list[bytes | None] = self.redis.hmget(  # type: ignore[assignment]
            self.keys[0], [f"{forge}|{n}" for n in names]
        )
        found = (_parsed(r, RepoReconciled) for r in raw)
        return {r.repository: r.at for r in found if r is not None}

    def listing(self, forge: str, repository: str) -> Listing | None:
        raw: bytes | None = self.redis.hget(self.keys[1], f"{forge}|{repository}")  # type: ignore[assignment]
        found: Listing | None = _parsed(raw, Listing)
        return found

    def keep_listing(self, forge: str, repository: str, listing: Listing) -> None:
        self.redis.hset(self.keys[1], f"{forge}|{repository}", listing.to_json())

    def record_run(self, run: SweepRun) -> None:
        self.redis.hset(self.keys[2], run.forge, run.to_json())

    def runs(self) -> list[SweepRun]:
        raw: dict[bytes, bytes] = self.redis.hgetall(self.keys[2])  # type: ignore[assignment]
        found = (_parsed(v, SweepRun) for v in raw.values())
        return sorted((r for r in found if r is not None), key=lambda r: r.forge)

    def count(self, forge: str, what: str, n: int = 1) -> None:
        if n:
            self.redis.hincrby(self.keys[3], f"{forge}|{what}", n)

    def counts(self) -> dict[tuple[str, str], int]:
        raw: dict[bytes, bytes] = self.redis.hgetall(self.keys[3])  # type: ignore[assignment]
        return _counted({k.decode(): int(v) for k, v in raw.items()})

    def asked(self, guids: Iterable[str]) -> set[str]:
        wanted = list(guids)
        if not wanted:
            return set()
        pipe = self.redis.pipeline(transaction=False)
        for guid in wanted:
            pipe.exists(keys.redelivery_asked(guid))
        return {g for g, there in zip(wanted, pipe.execute(), strict=True) if there}

    def remember_asked(self, guid: str, seconds: int) -> None:
        self.redis.set(keys.redelivery_asked(guid), "1", ex=max(1, seconds))

    def close(self) -> None:
        self.redis.close()


class MemorySweeps:
    """The same in this process (tests; a bot without Redis, where no sweep runs)."""

    def __init__(self) -> None:
        self._repos: dict[str, RepoReconciled] = {}
        self._listings: dict[str, Listing] = {}
        self._runs: dict[str, SweepRun] = {}
        self._counts: dict[str, int] = {}
        self._asked: set[str] = set()
        self._lock = threading.Lock()

    def record_repo(self, record: RepoReconciled) -> None:
        with self._lock:
            self._repos[record.key] = record
            for old in sorted(self._repos.values(), key=lambda r: r.at)[:-REPOSITORY_CAP]:
                self._repos.pop(old.key, None)
                self._listings.pop(old.key, None)

    def repos(self, limit: int = 50) -> list[RepoReconciled]:
        with self._lock:
            return sorted(self._repos.values(), key=lambda r: r.at, reverse=True)[:limit]

    def last_reconciled(self, forge: str, names: Sequence[str]) -> dict[str, float]:
        with self._lock:
            found = (self._repos.get(f"{forge}|{n}") for n in names)
            return {r.repository: r.at for r in found if r is not None}

    def listing(self, forge: str, repository: str) -> Listing | None:
        with self._lock:
            return self._listings.get(f"{forge}|{repository}")

    def keep_listing(self, forge: str, repository: str, listing: Listing) -> None:
        with self._lock:
            self._listings[f"{forge}|{repository}"] = listing

    def record_run(self, run: SweepRun) -> None:
        with self._lock:
            self._runs[run.forge] = run

    def runs(self) -> list[SweepRun]:
        with self._lock:
            return sorted(self._runs.values(), key=lambda r: r.forge)

    def count(self, forge: str, what: str, n: int = 1) -> None:
        if not n:
            return
        with self._lock:
            name = f"{forge}|{what}"
            self._counts[name] = self._counts.get(name, 0) + n

    def counts(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return _counted(dict(self._counts))

    def asked(self, guids: Iterable[str]) -> set[str]:
        with self._lock:
            return {g for g in guids if g in self._asked}

    def remember_asked(self, guid: str, seconds: int) -> None:
        with self._lock:
            self._asked.add(guid)  # forgotten never: a test's store lives one test

    def close(self) -> None:
        return None


def sweep_store(redis_url: str | None, namespace: str) -> SweepStore:
    """Redis when the bot runs on it, else an empty store of this process (no sweep runs)."""
    if redis_url:
        return RedisSweeps.from_url(redis_url, namespace)
    return MemorySweeps()
