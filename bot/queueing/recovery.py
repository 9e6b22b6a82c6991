"""Jobs whose worker died: how a live job shows it is alive, and how abandoned ones go back.

A worker running a job holds a lease, ``ichor:running:<job id>`` (``SET PX``, taken before the
job enters RQ's StartedJobRegistry and renewed with every heartbeat). When the worker dies the
lease lapses. Then:

- the reaper (:func:`reap_abandoned`, run by every worker on a short period) puts the job back
  at the front of its queue, once per retry RQ has left for it; a job out of retries is failed,
  and a job that reports it is queued in its place, so its check still ends on the forge;
- a redelivery of the delivery finds the job ``started`` without its running key and queues
  it again, as for a failed job (the submit script in :mod:`bot.queueing.redis_queue`).

Each job is moved by one Lua script, so two reapers, or a reaper and a redelivery, never both
queue it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import redis
from rq import Queue
from rq.job import Job
from rq.utils import current_timestamp, now, parse_composite_key, utcformat

from bot.queueing.base import ABANDONED_FUNCTION

log = logging.getLogger("ichor.recovery")


def running_key(job_id: str) -> str:
    return f"ichor:running:{job_id}"


def reaper_lock_key(queue_name: str) -> str:
    return f"ichor:reaper:{queue_name}"


# One StartedJobRegistry entry. KEYS: job hash, queue list, registry, running key, failed
# registry. ARGV: the entry, the job id, the failed registry's score, a timestamp.
REAP_SCRIPT = """
if redis.call('EXISTS', KEYS[4]) == 1 then
  return 'alive'
end
redis.call('ZREM', KEYS[3], ARGV[1])
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'started' then
  return 'leftover'
end
local left = tonumber(redis.call('HGET', KEYS[1], 'retries_left') or '0') or 0
if left > 0 then
  redis.call('HSET', KEYS[1], 'status', 'queued', 'retries_left', left - 1, 'enqueued_at', ARGV[4])
  redis.call('LPUSH', KEYS[2], ARGV[2])
  return 'requeued'
end
redis.call('HSET', KEYS[1], 'status', 'failed', 'ended_at', ARGV[4])
redis.call('ZADD', KEYS[5], ARGV[3], ARGV[2])
return 'failed'
"""


@dataclass(frozen=True, slots=True)
class Reaped:
    requeued: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()


def reap_abandoned(connection: redis.Redis, queue: Queue, *, lock_seconds: float) -> Reaped:
    """Requeue (or fail) every job of ``queue`` whose worker stopped renewing it. One worker at a
    time does it: the lock is short, so a worker killed while holding it delays the next only."""
    lock = connection.set(
        reaper_lock_key(queue.name), "1", nx=True, px=max(1, int(lock_seconds * 1000))
    )
    if not lock:
        return Reaped()
    registry = queue.started_job_registry
    # Every running job (as many as there are workers), not only those RQ thinks expired: the
    # lease, not the registry's score, says whether a job's worker is alive.
    entries = [_text(e) for e in connection.zrange(registry.key, 0, -1)]
    script = connection.register_script(REAP_SCRIPT)
    requeued: list[str] = []
    failed: list[str] = []
    for entry in entries:
        job_id, _ = parse_composite_key(entry)
        failed_score = current_timestamp() + _failure_ttl(connection, job_id)
        keys = [
            Job.key_for(job_id),
            queue.key,
            registry.key,
            running_key(job_id),
            queue.failed_job_registry.key,
        ]
        outcome = _text(script(keys, [entry, job_id, failed_score, utcformat(now())]))
        if outcome == "requeued":
            requeued.append(job_id)
        elif outcome == "failed":
            failed.append(job_id)
            _queue_report(connection, queue, job_id)
    for job_id in requeued:
        log.warning("job %s was abandoned by its worker: queued again", job_id)
    return Reaped(tuple(requeued), tuple(failed))


def _failure_ttl(connection: redis.Redis, job_id: str) -> int:
    raw = connection.hget(Job.key_for(job_id), "failure_ttl")
    try:
        return int(_text(raw)) if raw is not None else 7 * 24 * 3600
    except ValueError:
        return 7 * 24 * 3600


def _queue_report(connection: redis.Redis, queue: Queue, job_id: str) -> None:
    """A job abandoned with no retries left cannot post its own end: a small job does."""
    try:
        job = Job.fetch(job_id, connection=connection)
        args: tuple[Any, ...] = tuple(job.args)
    except Exception:  # unreadable: nothing to report with
        log.exception("job %s was abandoned with no retries left and cannot be read", job_id)
        return
    log.error("job %s was abandoned with no retries left: reporting it as not completed", job_id)
    queue.enqueue(
        ABANDONED_FUNCTION,
        *args,
        job_id=f"{job_id}-abandoned",
        at_front=True,
        result_ttl=job.result_ttl,
        failure_ttl=job.failure_ttl,
        description=f"report abandoned {job.description}",
    )


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
