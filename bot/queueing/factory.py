"""The queue the settings ask for: RQ on Redis when ICHOR_REDIS_URL is set, else in-process."""

from __future__ import annotations

from bot.queueing.base import DeliveryQueue
from bot.settings import Settings


def build_queue(settings: Settings) -> tuple[DeliveryQueue, str]:
    if settings.redis_url:
        from bot.queueing.redis_queue import RedisDeliveryQueue

        queue = RedisDeliveryQueue(
            settings.redis_url, settings.queue_name, job_timeout=settings.job_timeout
        )
        return queue, "redis"
    from bot.queueing.inprocess import InProcessDeliveryQueue

    return InProcessDeliveryQueue(), "in-process"
