"""Jobs whose worker died: how a live job shows it is alive, and how abandoned ones go back.

A worker running a job holds a lease, ``ichor:running:<job id>`` (``SET PX``, taken before the
job enters RQ's StartedJobRegistry and renewed with every heartbeat). When the worker dies the
lease lapses. Then:

- the reaper (:func:`reap_abandoned`, run by every worker on a short period), once the lease
  has stayed missing for a grace period (after a Redis outage every lease has lapsed, and a
  live worker needs a heartbeat to renew its own), puts the job back at the front of its
  queue, once per retry RQ has left for it; a job out of retries is failed, and a job that
  reports it is queued in its place, so its check still ends on the forge;
- a job a worker took off the queue but died before leasing (RQ's intermediate queue) goes
  back after the same grace (RQ would wait over a minute);
- a redelivery of the delivery finds the job ``started`` without its running key and queues
  it again, as for a failed job (the submit script in :mod:`bot.queueing.redis_queue`).

Each job is moved by one Lua script, so two reapers, or a reaper and a redelivery, never both
queue it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import redis
from rq import Queue
from rq.job import Job
from rq.utils import current_timestamp, now, parse_composite_key, utcformat

from bot.queueing.base import ABANDONED_FUNCTION, JOB_FUNCTION
from bot.state import keys as key_names

log = logging.getLogger("ichor.recovery")


def running_key(job_id: str) -> str:
    return key_names.running(job_id)


def reaper_lock_key(queue_name: str) -> str:
    return key_names.reaper(queue_name)


# One StartedJobRegistry entry. KEYS: job hash, queue list, registry, running key, failed
# registry, unleased key. ARGV: the entry, the job id, the failed registry's score, a
# timestamp, now (ms), the grace (ms). A lease must stay missing for the grace: after a Redis
# outage every lease has lapsed, and a live worker needs a heartbeat to renew its own.
REAP_SCRIPT = """
if redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('DEL', KEYS[6])
  return 'alive'
end
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'started' then
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('DEL', KEYS[6])
  return 'leftover'
end
local first = redis.call('GET', KEYS[6])
if not first then
  redis.call('SET', KEYS[6], ARGV[5], 'PX', 10 * tonumber(ARGV[6]))
  return 'seen'
end
if tonumber(ARGV[5]) - tonumber(first) < tonumber(ARGV[6]) then
  return 'waiting'
end
redis.call('DEL', KEYS[6])
redis.call('ZREM', KEYS[3], ARGV[1])
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


# One job in RQ's intermediate queue (taken off the queue, not yet started). KEYS: the
# intermediate list, the queue list, the job hash, its running key, its unclaimed key. ARGV:
# the job id, now (ms), the grace (ms).
UNCLAIMED_SCRIPT = """
if redis.call('EXISTS', KEYS[4]) == 1 or redis.call('HGET', KEYS[3], 'status') ~= 'queued' then
  redis.call('DEL', KEYS[5])
  return 'claimed'
end
local first = redis.call('GET', KEYS[5])
if not first then
  redis.call('SET', KEYS[5], ARGV[2], 'PX', 10 * tonumber(ARGV[3]))
  return 'seen'
end
if tonumber(ARGV[2]) - tonumber(first) < tonumber(ARGV[3]) then
  return 'waiting'
end
redis.call('DEL', KEYS[5])
redis.call('LREM', KEYS[1], 1, ARGV[1])
redis.call('LPUSH', KEYS[2], ARGV[1])
return 'requeued'
"""


@dataclass(frozen=True, slots=True)
class Reaped:
    requeued: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()


def reap_abandoned(
    connection: redis.Redis, queue: Queue, *, lock_seconds: float, grace_seconds: float
) -> Reaped:
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
    now_ms, grace_ms = int(time.time() * 1000), max(1, int(grace_seconds * 1000))
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
            key_names.unleased(job_id),
        ]
        argv: list[str | int] = [entry, job_id, failed_score, utcformat(now()), now_ms, grace_ms]
        outcome = _text(script(keys, argv))
        if outcome == "requeued":
            requeued.append(job_id)
        elif outcome == "failed":
            failed.append(job_id)
            _queue_report(connection, queue, job_id)
    requeued += _reap_unclaimed(connection, queue, grace_seconds)
    for job_id in requeued:
        log.warning("job %s was abandoned by its worker: queued again", job_id)
    return Reaped(tuple(requeued), tuple(failed))


def _reap_unclaimed(connection: redis.Redis, queue: Queue, grace_seconds: float) -> list[str]:
    script = connection.register_script(UNCLAIMED_SCRIPT)
    now_ms, grace_ms = int(time.time() * 1000), max(1, int(grace_seconds * 1000))
    requeued = []
    for raw in connection.lrange(queue.intermediate_queue_key, 0, -1):
        job_id = _text(raw)
        keys = [
            queue.intermediate_queue_key,
            queue.key,
            Job.key_for(job_id),
            running_key(job_id),
            key_names.unclaimed(job_id),
        ]
        if _text(script(keys, [job_id, now_ms, grace_ms])) == "requeued":
            requeued.append(job_id)
    return requeued


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
    if job.func_name != JOB_FUNCTION:  # a sweep: no check to end; the next one runs anew
        log.error("job %s was abandoned with no retries left", job_id)
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
