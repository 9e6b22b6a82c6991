"""Deliveries as RQ jobs on Redis, deduplicated by delivery id, two round trips per batch.

A marker ``ichor:delivery:<job id>`` is set with ``SET NX``; only the delivery that sets it is
enqueued. A marker whose job is gone (a crash between the two writes), whose job failed
(a person clicked "redeliver"), or whose job is ``started`` by a worker that died (its running
key, :func:`bot.queueing.recovery.running_key`, has lapsed) lets the delivery through again.

The web process submits from its event loop (``asubmit_many``, redis.asyncio): a second
thread doing the Redis work would fight the request handlers for the GIL, and every handover
costs a switch interval. Job records are RQ's own (``Job.create(...).to_dict()``, its
public serialization); one Lua script per delivery checks the marker and writes the record and
the queue push atomically — what ``Job.save`` and ``Queue.push_job_id`` do — so a batch is one
round trip and a crash can never leave a marker without its job. That script is the one place
the queue writes RQ's keys itself: RQ's ``unique=True`` enqueue refuses a duplicate id but
cannot let a failed or stuck job's redelivery through, nor record the pull request's head in
the same step. ``tests/queueing/test_job_record.py`` holds it to RQ's contract, and RQ is
pinned to a minor version (pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import redis
import redis.asyncio
from rq import Queue, Retry
from rq.job import Job, JobStatus
from rq.utils import now

from bot.queueing.base import JOB_FUNCTION, Outcome, QueuedDelivery, QueueUnavailableError
from bot.queueing.recovery import running_key
from bot.state import keys as key_names
from bot.state.redis_state import HEAD_TTL_SECONDS, RECORD_HEAD_LUA

MARKER_TTL_SECONDS = HEAD_TTL_SECONDS
# Job hashes outlive their markers, so a marker always finds its job's state.
RESULT_TTL_SECONDS = MARKER_TTL_SECONDS + 3600
RETRY = Retry(max=3, interval=[10, 60, 300])
DEFAULT_JOB_TIMEOUT = 600
_DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


# One delivery, atomically: set the dedupe marker; if it was new, or its job is gone, failed
# or stuck (started, its worker's running key lapsed), write RQ's job record and push it on the
# queue; for a pull request event, record its head (the state store's statement, here so the
# head is recorded atomically with its job). Returns the outcome's value.
SUBMIT_SCRIPT = """
local fresh = redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1])
local status = redis.call('HGET', KEYS[2], 'status')
local outcome = 'queued'
if not fresh and status then
  local stuck = status == 'started' and redis.call('EXISTS', KEYS[8]) == 0
  if status ~= 'failed' and not stuck then
    return 'duplicate'
  end
  outcome = 'requeued'
  redis.call('ZREM', KEYS[4], ARGV[2])
  redis.call('DEL', KEYS[2])
end
local fields = cjson.decode(ARGV[5])
local flat = {'data', ARGV[4]}
for name, value in pairs(fields) do
  flat[#flat + 1] = name
  flat[#flat + 1] = value
end
redis.call('HSET', KEYS[2], unpack(flat))
redis.call('RPUSH', KEYS[3], ARGV[2])
redis.call('SADD', KEYS[5], ARGV[3])
if ARGV[6] ~= '' then
{record_head}end
return outcome
""".replace(
    "{record_head}",
    RECORD_HEAD_LUA.format(
        heads="KEYS[6]",
        sequence="KEYS[7]",
        sha="ARGV[6]",
        ttl="ARGV[1]",
        redelivery="outcome ~= 'queued'",
    ),
)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _description(delivery: QueuedDelivery) -> str:
    return f"{delivery.forge} {delivery.event_name} {delivery.delivery_id}"


def job_record(
    delivery: QueuedDelivery,
    origin: str,
    connection: redis.Redis,
    timeout: int = DEFAULT_JOB_TIMEOUT,
) -> tuple[bytes, dict[str, Any]]:
    """RQ's job record for a delivery, made by RQ (``Job.create`` and ``Job.to_dict``): the
    serialized call (``data``) apart, the other fields as they go into the job's hash."""
    job = Job.create(
        JOB_FUNCTION,
        args=(delivery.forge, delivery.delivery_id, delivery.event),
        id=delivery.job_id,
        connection=connection,
        result_ttl=RESULT_TTL_SECONDS,
        failure_ttl=RESULT_TTL_SECONDS,
        description=_description(delivery),
        origin=origin,
        status=JobStatus.QUEUED,
        timeout=timeout,
        retry=RETRY,
    )
    job.enqueued_at = now()
    fields = job.to_dict()
    data: bytes = fields.pop("data")
    return data, {k: v for k, v in fields.items() if v != ""}


def marker_key(job_id: str) -> str:
    return key_names.delivery(job_id)


def attempts_key(job_id: str) -> str:
    return key_names.attempts(job_id)


_NO_HEAD = key_names.NO_HEAD


class RedisDeliveryQueue:
    def __init__(
        self,
        url: str,
        queue_name: str = "ichor",
        *,
        job_timeout: int = DEFAULT_JOB_TIMEOUT,
        connection: redis.Redis | None = None,
    ) -> None:
        self.url = url
        self.job_timeout = job_timeout
        self.redis = connection or redis.Redis.from_url(
            url, socket_timeout=5, socket_connect_timeout=2
        )
        self.queue = Queue(queue_name, connection=self.redis)
        self._async: redis.asyncio.Redis | None = None
        self._async_script: Any = None

    # -- submitting ---------------------------------------------------------------------------
    def submit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]:
        try:
            pipe = self.redis.pipeline(transaction=False)
            script = self.redis.register_script(SUBMIT_SCRIPT)
            for delivery in deliveries:
                script(*self._script_call(delivery), client=pipe)
            return [Outcome(_text(r)) for r in pipe.execute()]
        except _DOWN as exc:
            raise QueueUnavailableError(str(exc)) from exc

    async def asubmit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]:
        if self._async is None:  # bound to the running loop on first use
            self._async = redis.asyncio.Redis.from_url(
                self.url, socket_timeout=5, socket_connect_timeout=2
            )
            self._async_script = self._async.register_script(SUBMIT_SCRIPT)
        try:
            pipe = self._async.pipeline(transaction=False)
            for delivery in deliveries:
                await self._async_script(*self._script_call(delivery), client=pipe)
            return [Outcome(_text(r)) for r in await pipe.execute()]
        except _DOWN as exc:
            raise QueueUnavailableError(str(exc)) from exc

    def _script_call(self, delivery: QueuedDelivery) -> tuple[list[str], list[Any]]:
        job_id = delivery.job_id
        keys = [
            marker_key(job_id),
            Job.key_for(job_id),
            self.queue.key,
            self.queue.failed_job_registry.key,
            Queue.redis_queues_keys,
        ]
        head = delivery.head
        keys += [
            key_names.head(head[0]) if head else _NO_HEAD,
            key_names.HEAD_SEQUENCE,
            running_key(job_id),
        ]
        data, fields = job_record(delivery, self.queue.name, self.redis, self.job_timeout)
        # The text fields travel as one JSON argument: packing some thirty arguments per
        # delivery cost more than everything else the web process does with Redis.
        return keys, [
            MARKER_TTL_SECONDS,
            job_id,
            self.queue.key,
            data,
            orjson.dumps(fields),
            head[1] if head else "",
        ]

    # -- looking -------------------------------------------------------------------------------
    def job_state(self, job_id: str) -> str | None:
        try:
            status = self.redis.hget(Job.key_for(job_id), "status")
        except _DOWN:
            return None
        return status.decode() if isinstance(status, bytes) else None

    def job_result(self, job_id: str) -> Any:
        try:
            return Job.fetch(job_id, connection=self.redis).return_value()
        except Exception:  # gone, expired, unreadable or Redis down: nothing to show
            return None

    def seen(self, job_ids: Sequence[str]) -> set[str]:
        """Which of ``job_ids`` have their dedupe marker: the bot took their delivery (a
        redelivery of one would be a duplicate, or requeue a failed job)."""
        if not job_ids:
            return set()
        pipe = self.redis.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.exists(marker_key(job_id))
        return {j for j, there in zip(job_ids, pipe.execute(), strict=True) if there}

    def begin_attempt(self, job_id: str) -> int:
        """Count a run of a job: 1 the first time, more when it runs again (a retry, a job
        recovered from a dead worker, a redelivery), so it resumes what it had started."""
        key = attempts_key(job_id)
        pipe = self.redis.pipeline(transaction=True)
        pipe.incr(key)
        pipe.expire(key, MARKER_TTL_SECONDS)
        return int(pipe.execute()[0])

    def depth(self) -> int:
        try:
            return int(self.queue.count)
        except _DOWN:
            return -1

    def states(self) -> dict[str, int]:
        try:
            return {
                "queued": int(self.queue.count),
                "started": len(self.queue.started_job_registry),
                "finished": len(self.queue.finished_job_registry),
                "failed": len(self.queue.failed_job_registry),
                "scheduled": len(self.queue.scheduled_job_registry),
            }
        except _DOWN:
            return {}

    def ping(self) -> bool:
        try:
            return bool(self.redis.ping())
        except _DOWN:
            return False

    def close(self) -> None:
        self.redis.close()
