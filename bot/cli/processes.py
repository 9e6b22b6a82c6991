"""``ichor-bot serve`` and ``ichor-bot worker``: the two processes of the Procfile."""

from __future__ import annotations

import errno
import logging
import socket
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from bot.errors import IchorError, UsageError
from bot.settings import Settings, forge_setups, half_configured

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from bot.queueing.base import DeliveryQueue
    from bot.queueing.inprocess import InProcessDeliveryQueue
    from bot.state.base import StateStore
    from bot.state.outcomes import OutcomeStore
    from bot.web.protocol import ConnectionLimits


log = logging.getLogger("ichor.forges")


def redis_location(url: str) -> str:
    """Host, port and database of a Redis URL, never its password."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}{parts.path}"


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything else starts: a port already taken is one
    clear line and nothing left running, not a traceback from deep inside the server."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UsageError(
                f"port {port} on {host} is already in use; stop what holds it or choose "
                "another port (ICHOR_PORT, --port, or make run PORT=...)"
            ) from None
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return sock


def port_problem(host: str, port: int) -> str | None:
    """Why ``serve`` could not listen on ``host:port`` now, or None (``make run`` asks first)."""
    try:
        listen(host, port).close()
    except UsageError as exc:
        return str(exc)
    return None


def serve(settings: Settings, host: str | None, port: int | None) -> int:
    import uvicorn

    from bot.web.protocol import protocol_class

    host = host or settings.host
    port = port or settings.port
    sock = listen(host, port)
    with sock:
        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s"
        )
        app, queue = build_app(settings)
        try:
            say_forges_served(settings)
            config = uvicorn.Config(
                app,
                host=host,
                port=port,
                http=protocol_class(connection_limits(settings)),
                ws="none",
                log_level="info",
                access_log=False,
            )
            uvicorn.Server(config).run(sockets=[sock])
        finally:
            queue.close()
    return 0


def build_app(settings: Settings) -> tuple[Starlette, DeliveryQueue]:
    """The web app and its queue. With the in-process queue both get one state store, so the
    status page shows the audit records this process's jobs write (they are nowhere else)."""
    from bot.state.memory import memory_state
    from bot.web.app import create_app

    state = None if settings.redis_url else memory_state()
    queue, kind = build_queue(settings, state)
    try:
        app = create_app(
            settings,
            queue,
            queue_kind=kind,
            redis_configured=bool(settings.redis_url),
            audit=None if state is None else state.audit,
        )
    except BaseException:
        queue.close()
        raise
    return app, queue


def build_queue(settings: Settings, state: StateStore | None = None) -> tuple[DeliveryQueue, str]:
    """The queue the settings ask for: RQ on Redis when ICHOR_REDIS_URL is set, else
    in-process, its jobs run by this process with a worker context built now (on ``state``,
    or a new memory state)."""
    if settings.redis_url:
        from bot.queueing.redis_queue import RedisDeliveryQueue

        queue = RedisDeliveryQueue(
            settings.redis_url, settings.queue_name, job_timeout=settings.job_timeout
        )
        return queue, "redis"
    return in_process_queue(settings, state), "in-process"


def in_process_queue(settings: Settings, state: StateStore | None = None) -> InProcessDeliveryQueue:
    from bot.queueing.inprocess import InProcessDeliveryQueue
    from bot.state.memory import memory_state
    from workers.context import build_context
    from workers.jobs import runner

    if state is None:
        state = memory_state()
    return InProcessDeliveryQueue(runner(build_context(settings, state)), state.heads)


def connection_limits(settings: Settings) -> ConnectionLimits:
    from bot.web.protocol import ConnectionLimits

    return ConnectionLimits(
        max_header_bytes=settings.max_header_bytes,
        max_body_bytes=settings.max_body_bytes,
        header_timeout=settings.header_timeout_seconds,
        body_timeout=settings.body_timeout_seconds,
        max_connections=settings.max_connections,
    )


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
    from bot.queueing.worker import IchorWorker, SweepTimer, Timings, worker_connection
    from bot.state.redis_state import redis_state
    from bot.state.sweeps import RedisSweeps
    from workers.context import build_context, installed_context

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        redis.Redis.from_url(settings.redis_url, socket_connect_timeout=2).ping()
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
        raise IchorError(
            f"cannot reach Redis at {redis_location(settings.redis_url)}: {exc}"
        ) from None
    connection = worker_connection(settings.redis_url, settings.redis_outage)
    attempts = RedisDeliveryQueue(settings.redis_url, settings.queue_name, connection=connection)
    sweeps = RedisSweeps(connection, settings.queue_name)
    context = build_context(
        settings, redis_state(connection), attempts, queue=attempts, sweeps=sweeps
    )
    say_forges_posted(settings, context.outcomes)
    queue = Queue(settings.queue_name, connection=connection)
    worker = IchorWorker(
        [queue],
        connection=connection,
        timings=Timings.from_settings(settings),
        sweep=SweepTimer.from_settings(settings),
        alive_file=settings.worker_alive_file,
    )
    with installed_context(context):  # not left behind when run in a process that goes on
        worker.work(with_scheduler=True, burst=burst)
    return 0


def say_forges_served(settings: Settings) -> None:
    """``serve``'s start-up lines on half-configured forges. With Redis the workers post, so
    their last report is read (a worker started later says so itself, and /readyz shows it)."""
    from bot.state.outcomes import NO_WORKER_REPORT, forge_problems, outcome_store

    store = outcome_store(settings.redis_url, settings.data_dir, settings.queue_name)
    try:
        lines = forge_problems(settings, store, jobs_here=not settings.redis_url)
    except Exception as exc:  # Redis away at start-up: the web process starts all the same
        lines = [f"cannot read which forges the workers can post to: {type(exc).__name__}"]
    finally:
        store.close()
    for line in lines:
        (log.info if line == NO_WORKER_REPORT else log.warning)(line)


def say_forges_posted(settings: Settings, store: OutcomeStore | None) -> None:
    """``worker``'s start-up lines: which forges it can post to, which are half-configured in
    its settings; and the same, kept where the web process's /readyz and status page read it."""
    setups = forge_setups(settings)
    able = [s.forge for s in setups if s.posts]
    log.info("this worker can post results to: %s", ", ".join(able) or "no forge")
    for line in half_configured(setups, receiving=False):
        log.warning(line)
    if store is None:
        return
    try:
        store.report_setups(setups)
    except Exception as exc:
        log.warning("could not tell the web process which forges this worker can post to: %s", exc)
