"""What became of each job, for the status page, ``/metrics`` and ``/readyz``: whether its
result reached the forge and, when it did not, why (design.md 7); and which forges the workers
last said they can post to.

The worker writes (the in-process queue's jobs too), the web process reads: Redis when the
bot runs on it, else files beside the history. Outcomes are capped like the history; the count
of jobs that ended without posting, by forge and reason, only grows (a Prometheus counter).
Every method is blocking: the web process calls them off its event loop.
"""

from __future__ import annotations

import enum
import json
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import redis

from bot.settings import ForgeSetup, Settings, forge_setups, half_configured, joined_setups
from bot.state import keys
from bot.state.history import clip_text as _clip
from bot.state.history import write_atomic

OUTCOME_CAP = 200
# The label values of the unposted counter, so /metrics stays bounded whatever is stored.
FORGES = ("github", "gitlab", "gitea", "local")


class Result(enum.StrEnum):
    POSTED = "posted"  # a check run, commit status or reply reached the forge
    DONE = "done"  # the job ran to its end (commands, onboarding, the change API)
    SILENT = "silent"  # nothing was to be posted (superseded, no .ichor.yaml)
    NOT_POSTED = "not-posted"


class Unposted(enum.StrEnum):
    """Why a job ended without posting its result."""

    SETTINGS = "settings"  # the forge's settings are missing or unusable (half-configured)
    REFUSED = "refused"  # the forge refused the bot: 401, 403, another 4xx
    UNRESOLVED = "unresolved"  # the repository, installation or pull request was not found
    UNREACHABLE = "unreachable"  # the forge could not be reached, or kept failing, to the end
    ERROR = "error"  # anything else; the worker's log has the details


# How the status page says each reason, before the reason's own text.
UNPOSTED_SAID = {
    Unposted.SETTINGS: "the bot's settings for this forge are incomplete",
    Unposted.REFUSED: "the forge refused the bot",
    Unposted.UNRESOLVED: "the forge could not find what the job names",
    Unposted.UNREACHABLE: "the forge could not be reached",
    Unposted.ERROR: "the job failed",
}


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """How one run of a job ended. A job run again replaces it."""

    at: float
    job_id: str
    forge: str
    result: str  # a Result
    detail: str = ""  # posted: the verdict; not posted: why
    kind: str = ""  # not posted: an Unposted
    final: bool = True  # not posted: False while the queue will try it again
    repository: str = "-"

    @property
    def unposted(self) -> bool:
        return self.result == Result.NOT_POSTED

    @property
    def counted(self) -> bool:
        """Ended for good without posting: what the counter counts."""
        return self.unposted and self.final

    @property
    def said(self) -> str:
        """The kind of failure in words, for the page."""
        try:
            return UNPOSTED_SAID[Unposted(self.kind)]
        except ValueError:
            return UNPOSTED_SAID[Unposted.ERROR]

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobOutcome:
        return cls(
            float(data["at"]),
            _clip(data["job_id"], 200),
            _clip(data["forge"], 40),
            _clip(data["result"], 40),
            _clip(data.get("detail", "")),
            _clip(data.get("kind", ""), 40),
            bool(data.get("final", True)),
            _clip(data.get("repository", "-"), 400),
        )


def _outcome(data: Any) -> JobOutcome | None:
    """An outcome read back, or None when it does not parse (an older or damaged record)."""
    try:
        return JobOutcome.from_dict(data)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _parsed(raw: bytes | str | None) -> JobOutcome | None:
    try:
        return None if raw is None else _outcome(json.loads(raw))
    except ValueError:
        return None


def _setups(raw: bytes | str | None) -> list[ForgeSetup] | None:
    if raw is None:
        return None
    try:
        return [ForgeSetup.from_dict(s) for s in json.loads(raw)["forges"]]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _counted(fields: dict[str, int]) -> dict[tuple[str, str], int]:
    """``forge|kind`` fields as (forge, kind), only the label values /metrics may show."""
    counts: dict[tuple[str, str], int] = {}
    kinds = {k.value for k in Unposted}
    for field, count in fields.items():
        forge, _, kind = field.partition("|")
        if forge in FORGES and kind in kinds:
            counts[(forge, kind)] = count
    return counts


def _count_field(outcome: JobOutcome) -> str:
    return f"{outcome.forge}|{outcome.kind}" if outcome.counted else ""


class OutcomeStore(Protocol):
    def add(self, outcome: JobOutcome) -> None: ...

    def outcomes(self, job_ids: Sequence[str]) -> dict[str, JobOutcome]: ...

    def recent(self, limit: int = 50) -> list[JobOutcome]:
        """Newest first."""
        ...

    def unposted_counts(self) -> dict[tuple[str, str], int]:
        """Jobs that ended for good without posting, by (forge, reason)."""
        ...

    def report_setups(self, setups: Sequence[ForgeSetup]) -> None:
        """What a worker starting up can post to (the last one to start is what is read)."""
        ...

    def setups(self) -> list[ForgeSetup] | None:
        """What a worker last reported; None when none has."""
        ...

    def close(self) -> None: ...


# Keep the outcome, count it when it is a final unposted one, forget the oldest past the cap.
_ADD = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
if ARGV[5] ~= '' then
  redis.call('HINCRBY', KEYS[3], ARGV[5], 1)
end
local old = redis.call('ZRANGE', KEYS[2], 0, -(tonumber(ARGV[4]) + 1))
if #old > 0 then
  redis.call('HDEL', KEYS[1], unpack(old))
  redis.call('ZREM', KEYS[2], unpack(old))
end
"""


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisOutcomes:
    """Under the history's prefix, so whatever clears a queue's history clears these too."""

    def __init__(self, url: str, namespace: str = "ichor", *, timeout: float = 2.0) -> None:
        self.redis = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        prefix = keys.history(namespace)
        self.keys = (f"{prefix}:outcomes", f"{prefix}:outcome-order", f"{prefix}:unposted")
        self.forges_key = f"{prefix}:forges"
        self._add = self.redis.register_script(_ADD)

    def add(self, outcome: JobOutcome) -> None:
        args: list[str | float] = [
            outcome.job_id,
            outcome.to_json(),
            outcome.at,
            OUTCOME_CAP,
            _count_field(outcome),
        ]
        self._add(keys=list(self.keys), args=args)

    def outcomes(self, job_ids: Sequence[str]) -> dict[str, JobOutcome]:
        if not job_ids:
            return {}
        raw = self.redis.hmget(self.keys[0], list(job_ids))
        found = (_parsed(r) for r in raw)
        return {o.job_id: o for o in found if o is not None}

    def recent(self, limit: int = 50) -> list[JobOutcome]:
        top = max(0, min(limit, OUTCOME_CAP) - 1)
        ids = [_text(i) for i in self.redis.zrevrange(self.keys[1], 0, top)]
        found = self.outcomes(ids)
        return [found[i] for i in ids if i in found]

    def unposted_counts(self) -> dict[tuple[str, str], int]:
        raw = self.redis.hgetall(self.keys[2])
        return _counted({_text(k): int(v) for k, v in raw.items()})

    def report_setups(self, setups: Sequence[ForgeSetup]) -> None:
        self.redis.set(self.forges_key, json.dumps({"forges": [s.to_dict() for s in setups]}))

    def setups(self) -> list[ForgeSetup] | None:
        return _setups(self.redis.get(self.forges_key))

    def close(self) -> None:
        self.redis.close()


class FileOutcomes:
    """The same in two files under the history directory, rewritten whole (they are small)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()

    @property
    def _path(self) -> Path:
        return self.root / "outcomes.json"

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"jobs": {}, "unposted": {}}
        if not isinstance(data, dict):
            return {"jobs": {}, "unposted": {}}
        jobs, counts = data.get("jobs"), data.get("unposted")
        return {
            "jobs": jobs if isinstance(jobs, dict) else {},
            "unposted": counts if isinstance(counts, dict) else {},
        }

    def add(self, outcome: JobOutcome) -> None:
        with self._lock:
            data = self._load()
            jobs: dict[str, Any] = data["jobs"]
            jobs.pop(outcome.job_id, None)
            jobs[outcome.job_id] = asdict(outcome)
            if len(jobs) > OUTCOME_CAP:
                newest = sorted(jobs.items(), key=lambda j: float(j[1].get("at", 0)))
                data["jobs"] = dict(newest[-OUTCOME_CAP:])
            if field := _count_field(outcome):
                data["unposted"][field] = int(data["unposted"].get(field, 0)) + 1
            write_atomic(self._path, json.dumps(data, sort_keys=True))

    def _all(self) -> list[JobOutcome]:
        jobs = self._load()["jobs"].values()
        found = (_outcome(j) for j in jobs)
        return sorted((o for o in found if o is not None), key=lambda o: o.at, reverse=True)

    def outcomes(self, job_ids: Sequence[str]) -> dict[str, JobOutcome]:
        wanted = set(job_ids)
        return {o.job_id: o for o in self._all() if o.job_id in wanted}

    def recent(self, limit: int = 50) -> list[JobOutcome]:
        return self._all()[: min(limit, OUTCOME_CAP)]

    def unposted_counts(self) -> dict[tuple[str, str], int]:
        counts = self._load()["unposted"]
        return _counted({str(k): int(v) for k, v in counts.items() if isinstance(v, int)})

    def report_setups(self, setups: Sequence[ForgeSetup]) -> None:
        text = json.dumps({"forges": [s.to_dict() for s in setups]})
        write_atomic(self.root / "forges.json", text)

    def setups(self) -> list[ForgeSetup] | None:
        try:
            return _setups((self.root / "forges.json").read_text(encoding="utf-8"))
        except OSError:
            return None

    def close(self) -> None:
        return None


def outcome_store(redis_url: str | None, data_dir: Path, namespace: str) -> OutcomeStore:
    """Where the history is: Redis when the bot runs on it, else the data dir."""
    if redis_url:
        return RedisOutcomes(redis_url, namespace)
    return FileOutcomes(data_dir / "history")


NO_WORKER_REPORT = "no worker has said yet which forges it can post to (each says so at start-up)"


def forge_problems(settings: Settings, store: OutcomeStore, *, jobs_here: bool) -> list[str]:
    """The half-configured forges as the web process can tell (blocking): from its own settings
    when it runs the jobs itself, else its webhook secrets joined with what the last worker to
    start reported (the web process needs no forge credentials, so it cannot know alone)."""
    own = forge_setups(settings)
    if jobs_here:
        return half_configured(own)
    reported = store.setups()
    if reported is None:
        return [NO_WORKER_REPORT]
    return half_configured(joined_setups(own, reported))
