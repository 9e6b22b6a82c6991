"""``ichor-bot serve`` and ``ichor-bot worker``: the two processes of the Procfile."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from bot.errors import IchorError, UsageError
from bot.settings import Settings


def redis_location(url: str) -> str:
    """Host, port and database of a Redis URL, never its password."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}{parts.path}"


def serve(settings: Settings, host: str | None, port: int | None) -> int:
    import uvicorn

    from bot.queueing.factory import build_queue
    from bot.web.app import create_app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    queue, kind = build_queue(settings)
    if kind == "in-process":  # its jobs run in this process: they need the worker's context
        from workers.context import configure

        configure(settings, queue)
    app = create_app(settings, queue, queue_kind=kind, redis_configured=bool(settings.redis_url))
    try:
        uvicorn.run(
            app,
            host=host or settings.host,
            port=port or settings.port,
            log_level="info",
            access_log=False,
        )
    finally:
        queue.close()
    return 0


def work(settings: Settings, *, burst: bool = False) -> int:
    """An RQ worker with the scheduler, so retries with backoff run
    (:class:`bot.queueing.worker.IchorWorker`: jobs of dead workers are recovered, Redis
    outages ridden out)."""
    if not settings.redis_url:
        raise UsageError(
            "ICHOR_REDIS_URL is not set: without Redis, jobs run inside `ichor-bot serve`"
        )
    import redis
    from rq import Queue

    from bot.queueing.redis_queue import RedisDeliveryQueue
    from bot.queueing.worker import IchorWorker, Timings, worker_connection
    from workers.context import configure

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        redis.Redis.from_url(settings.redis_url, socket_connect_timeout=2).ping()
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
        raise IchorError(
            f"cannot reach Redis at {redis_location(settings.redis_url)}: {exc}"
        ) from None
    connection = worker_connection(settings.redis_url, settings.redis_outage)
    pulls = RedisDeliveryQueue(settings.redis_url, settings.queue_name, connection=connection)
    configure(settings, pulls, pulls)
    queue = Queue(settings.queue_name, connection=connection)
    worker = IchorWorker([queue], connection=connection, timings=Timings.from_settings(settings))
    worker.work(with_scheduler=True, burst=burst)
    return 0
