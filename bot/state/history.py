"""What the status page remembers across restarts: deliveries (refused ones too) and the
latest check of each pull request or commit.

Two stores with one interface: Redis when the bot runs on Redis (the web process records
deliveries, the worker records checks), and files under the data dir for the in-process queue.
Both are capped, so a busy or hostile sender cannot grow them without bound. Every method is
blocking: the web process calls them off its event loop.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import redis

from bot.forges.base import CheckOutput
from bot.repos import RepoRef
from bot.state import keys
from bot.state.check_facts import CheckFacts, JobRun

log = logging.getLogger("ichor.history")

DELIVERY_CAP = 200
CHECK_CAP = 200
# A summary is at most what a forge takes (64 KiB); issues past this many are counted only.
SUMMARY_LIMIT = 65_536
ISSUE_LIMIT = 200
TEXT_LIMIT = 2_000  # one name, title or message


def clip_text(value: object, limit: int = TEXT_LIMIT) -> str:
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class DeliveryEntry:
    """One webhook delivery and how it was answered."""

    at: float
    forge: str
    status: int  # the HTTP status answered
    outcome: str  # queued, duplicate, ignored, unauthorized, too-large, bad-request, ...
    reason: str = ""  # why it was refused or ignored
    event: str = "-"
    repository: str = "-"
    delivery_id: str = "-"
    job_id: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DeliveryEntry:
        job = data.get("job_id")
        return cls(
            float(data["at"]),
            clip_text(data["forge"]),
            int(data["status"]),
            clip_text(data["outcome"]),
            clip_text(data.get("reason", "")),
            clip_text(data.get("event", "-")),
            clip_text(data.get("repository", "-")),
            clip_text(data.get("delivery_id", "-")),
            None if job is None else clip_text(job),
        )


@dataclass(frozen=True, slots=True)
class IssueLine:
    """One annotation as the forge received it."""

    path: str
    line: int
    level: str
    title: str
    message: str


@dataclass(frozen=True, slots=True)
class CheckEntry:
    """A posted check: the verdict and what the forge was sent (summary and issues)."""

    at: float  # when it was posted
    forge: str  # the forge its delivery came from: github, gitlab, gitea, local
    repository: str
    number: int | None  # the pull request, or None for a push
    head_sha: str
    conclusion: str
    title: str
    summary: str  # markdown, exactly as posted (clipped to SUMMARY_LIMIT)
    issues: tuple[IssueLine, ...] = ()
    issue_count: int = 0  # all annotations, also those past ISSUE_LIMIT
    delivery_id: str = ""
    web_url: str | None = None  # the repository's page on its forge, when it has one
    # The adapter that received it, when not the delivery's forge (``make run`` checks a
    # GitHub delivery on the local forge); "" for the same.
    posted_to: str = ""
    job_id: str = ""
    started_at: float | None = None  # when its job started (queued: the delivery's answer)
    facts: CheckFacts | None = None  # the check as values; None for a check that could not run

    @property
    def key(self) -> str:
        """One entry per pull request (its latest head), or per commit for a push."""
        if self.number is not None:
            return f"{self.forge}:{self.repository}:{self.number}"
        return f"{self.forge}:{self.repository}@{self.head_sha}"

    @property
    def id(self) -> str:
        """The key as a URL-safe name for the check's page."""
        return check_id(self.key)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckEntry:
        number = data.get("number")
        issues = tuple(
            IssueLine(
                clip_text(i["path"]),
                int(i["line"]),
                clip_text(i["level"]),
                clip_text(i["title"]),
                clip_text(i["message"], 4_000),
            )
            for i in list(data.get("issues") or [])[:ISSUE_LIMIT]
        )
        web = data.get("web_url")
        started = data.get("started_at")
        facts = data.get("facts")
        return cls(
            float(data["at"]),
            clip_text(data["forge"]),
            clip_text(data["repository"]),
            None if number is None else int(number),
            clip_text(data["head_sha"], 64),
            clip_text(data["conclusion"]),
            clip_text(data["title"]),
            clip_text(data["summary"], SUMMARY_LIMIT),
            issues,
            int(data.get("issue_count", len(issues))),
            clip_text(data.get("delivery_id", "")),
            None if web is None else clip_text(web),
            clip_text(data.get("posted_to", ""), 40),
            clip_text(data.get("job_id", ""), 200),
            None if started is None else float(started),
            None if facts is None else CheckFacts.from_dict(facts),
        )


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def check_id(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def _parsed(raw: bytes | str | None, kind: type[DeliveryEntry] | type[CheckEntry]) -> Any:
    """An entry read back, or None when it does not parse (an older or damaged record)."""
    if raw is None:
        return None
    try:
        return kind.from_dict(json.loads(raw))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


class HistoryStore(Protocol):
    def add_deliveries(self, entries: Sequence[DeliveryEntry]) -> None: ...

    def add_check(self, entry: CheckEntry) -> None: ...

    def deliveries(self, limit: int = DELIVERY_CAP) -> list[DeliveryEntry]:
        """Newest first."""
        ...

    def checks(self, limit: int = 50) -> list[CheckEntry]:
        """The latest check of each pull request or commit, newest first."""
        ...

    def check(self, check_id: str) -> CheckEntry | None: ...

    def close(self) -> None: ...


# Store the check, then forget the oldest past the cap, in one round trip.
_ADD_CHECK = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
local old = redis.call('ZRANGE', KEYS[2], 0, -(tonumber(ARGV[4]) + 1))
if #old > 0 then
  redis.call('HDEL', KEYS[1], unpack(old))
  redis.call('ZREM', KEYS[2], unpack(old))
end
"""


class RedisHistory:
    """A capped list of deliveries and a hash of checks ordered by a sorted set."""

    def __init__(self, url: str, namespace: str = "ichor", *, timeout: float = 2.0) -> None:
        # Short timeouts: a page or a job waits on this at most that long.
        self.redis = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self.prefix = keys.history(namespace)
        self._add_check = self.redis.register_script(_ADD_CHECK)

    @property
    def keys(self) -> tuple[str, str, str]:
        return (f"{self.prefix}:deliveries", f"{self.prefix}:checks", f"{self.prefix}:order")

    def add_deliveries(self, entries: Sequence[DeliveryEntry]) -> None:
        if not entries:
            return
        key = self.keys[0]
        pipe = self.redis.pipeline(transaction=False)
        pipe.lpush(key, *(json.dumps(asdict(e), sort_keys=True) for e in entries))
        pipe.ltrim(key, 0, DELIVERY_CAP - 1)
        pipe.execute()

    def add_check(self, entry: CheckEntry) -> None:
        _, checks, order = self.keys
        self._add_check(keys=[checks, order], args=[entry.id, entry.to_json(), entry.at, CHECK_CAP])

    def deliveries(self, limit: int = DELIVERY_CAP) -> list[DeliveryEntry]:
        raw = self.redis.lrange(self.keys[0], 0, max(0, min(limit, DELIVERY_CAP) - 1))
        return [e for e in (_parsed(r, DeliveryEntry) for r in raw) if e is not None]

    def checks(self, limit: int = 50) -> list[CheckEntry]:
        _, checks, order = self.keys
        ids = [_text(i) for i in self.redis.zrevrange(order, 0, max(0, min(limit, CHECK_CAP) - 1))]
        if not ids:
            return []
        raw = self.redis.hmget(checks, ids)
        return [e for e in (_parsed(r, CheckEntry) for r in raw) if e is not None]

    def check(self, check_id: str) -> CheckEntry | None:
        entry: CheckEntry | None = _parsed(self.redis.hget(self.keys[1], check_id), CheckEntry)
        return entry

    def close(self) -> None:
        self.redis.close()


class FileHistory:
    """The same under a directory: ``deliveries.jsonl`` (appended, compacted past twice the
    cap) and one JSON file per check, newest by the time inside it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._lines: int | None = None  # lines in deliveries.jsonl, counted on first write

    @property
    def _deliveries(self) -> Path:
        return self.root / "deliveries.jsonl"

    @property
    def _checks(self) -> Path:
        return self.root / "checks"

    def add_deliveries(self, entries: Sequence[DeliveryEntry]) -> None:
        if not entries:
            return
        lines = "".join(json.dumps(asdict(e), sort_keys=True) + "\n" for e in entries)
        with self._lock:
            self.root.mkdir(parents=True, exist_ok=True)
            if self._lines is None:
                self._lines = len(self._read_lines())
            with self._deliveries.open("a", encoding="utf-8") as fh:
                fh.write(lines)
            self._lines += len(entries)
            if self._lines > 2 * DELIVERY_CAP:
                kept = self._read_lines()[-DELIVERY_CAP:]
                write_atomic(self._deliveries, "".join(line + "\n" for line in kept))
                self._lines = len(kept)

    def _read_lines(self) -> list[str]:
        try:
            return self._deliveries.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []

    def add_check(self, entry: CheckEntry) -> None:
        with self._lock:
            write_atomic(self._checks / f"{entry.id}.json", entry.to_json())
            files = self._check_files()
            for _, old in files[CHECK_CAP:]:
                with contextlib.suppress(OSError):
                    old.unlink()

    def _check_files(self) -> list[tuple[float, Path]]:
        """Newest first, by modification time (each file is written once per check)."""
        try:
            found = [
                (e.stat().st_mtime, Path(e.path))
                for e in os.scandir(self._checks)
                if e.name.endswith(".json") and e.is_file(follow_symlinks=False)
            ]
        except OSError:
            return []
        return sorted(found, key=lambda f: f[0], reverse=True)

    def deliveries(self, limit: int = DELIVERY_CAP) -> list[DeliveryEntry]:
        lines = self._read_lines()[-min(limit, DELIVERY_CAP) :]
        parsed = (_parsed(line, DeliveryEntry) for line in reversed(lines))
        return [e for e in parsed if e is not None]

    def checks(self, limit: int = 50) -> list[CheckEntry]:
        entries = [_parsed(_read(p), CheckEntry) for _, p in self._check_files()[:limit]]
        found = [e for e in entries if e is not None]
        return sorted(found, key=lambda e: e.at, reverse=True)

    def check(self, check_id: str) -> CheckEntry | None:
        if not (len(check_id) == 24 and all(c in "0123456789abcdef" for c in check_id)):
            return None
        entry: CheckEntry | None = _parsed(_read(self._checks / f"{check_id}.json"), CheckEntry)
        return entry

    def close(self) -> None:
        return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    Path(tmp).replace(path)


def history_store(redis_url: str | None, data_dir: Path, namespace: str) -> HistoryStore:
    """Redis when the bot runs on it (web and worker share it), else the data dir."""
    if redis_url:
        return RedisHistory(redis_url, namespace)
    return FileHistory(data_dir / "history")


def web_url(repo: RepoRef, forge: str) -> str | None:
    """The repository's page, from its https clone URL; none for the local forge."""
    url = repo.git_url
    if forge == "local" or not url.startswith(("https://", "http://")):
        return None
    return url.removesuffix(".git")


class CheckRecorder:
    """What the worker calls once a check is posted: one small write, never fatal to the job."""

    def __init__(self, store: HistoryStore, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    def record(
        self,
        forge: str,
        repo: RepoRef,
        number: int | None,
        delivery_id: str,
        head_sha: str,
        output: CheckOutput,
        *,
        facts: CheckFacts | None = None,
        run: JobRun | None = None,
    ) -> None:
        """``forge`` is the adapter's name; ``run``, when known, names the delivery's forge,
        which the entry is filed under (the page shows where it was posted beside it)."""
        try:
            issues = tuple(
                IssueLine(
                    clip_text(a.path),
                    a.start_line,
                    a.level,
                    clip_text(a.title),
                    clip_text(a.message, 4_000),
                )
                for a in output.annotations[:ISSUE_LIMIT]
            )
            delivered = forge if run is None else run.forge
            entry = CheckEntry(
                self.clock(),
                delivered,
                repo.full_name,
                number,
                head_sha,
                output.conclusion.value,
                clip_text(output.title),
                clip_text(output.summary, SUMMARY_LIMIT),
                issues,
                len(output.annotations),
                delivery_id,
                web_url(repo, forge),
                "" if forge == delivered else forge,
                "" if run is None else run.job_id,
                None if run is None else run.started_at,
                facts,
            )
            self.store.add_check(entry)
        except Exception as exc:  # the verdict is posted; the page missing it is the lesser harm
            log.warning(
                "could not keep the check of %s for the status page: %s", repo.full_name, exc
            )
