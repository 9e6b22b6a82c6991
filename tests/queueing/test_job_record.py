"""The job record written for a delivery is the one RQ itself would write."""

from __future__ import annotations

import pickle
import zlib

from bot.queueing.base import QueuedDelivery
from bot.queueing.redis_queue import RedisDeliveryQueue, job_record
from tests.support.redis_url import SHARED_REDIS_URL

DELIVERY = QueuedDelivery(
    "github", "d-1", "pull_request", {"type": "ping", "forge": "github", "hook_id": None}
)
TIMESTAMPS = {"created_at", "enqueued_at"}


def test_record_matches_rq() -> None:
    queue = RedisDeliveryQueue(SHARED_REDIS_URL, "record-test")
    try:
        expected = {k: v for k, v in queue._job(DELIVERY).to_dict().items() if v != ""}
    finally:
        queue.close()
    data, fields = job_record(DELIVERY, "record-test")
    assert pickle.loads(data) == pickle.loads(zlib.decompress(expected.pop("data")))
    assert set(fields) == set(expected)
    for key, value in expected.items():
        if key not in TIMESTAMPS:
            assert str(fields[key]) == str(getattr(value, "value", value)), key
