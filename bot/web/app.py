"""The Starlette app: verify the raw body, parse, dedupe, enqueue — and nothing slower.

Order matters: nothing is parsed before the signature is verified (401), a body over the limit
is refused before it is read whole (413), malformed JSON is 400, an event the bot does not act
on is answered 200 and not queued, a duplicate is 200, a queued delivery 202, and only when
the queue is down and the spool full is the answer 503.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from bot.queueing.base import DeliveryQueue, Outcome, QueuedDelivery
from bot.queueing.spool import Spool
from bot.settings import Settings, split_secrets
from bot.web.delivery_log import DeliveryLog
from bot.web.history import history_store
from bot.web.metrics import CONTENT_TYPE, Metrics
from bot.web.submitter import Submitter
from bot.web.ui import ui_routes
from bot.webhooks import (
    Forge,
    Verification,
    WebhookError,
    event_to_dict,
    is_actionable,
    parse_delivery,
    verify_gitea,
    verify_github,
    verify_gitlab,
)

log = logging.getLogger("ichor.web")
_STATUS = {
    Outcome.QUEUED: 202,
    Outcome.REQUEUED: 202,
    Outcome.SPOOLED: 202,
    Outcome.DUPLICATE: 200,
    Outcome.UNAVAILABLE: 503,
}
Verifier = Callable[[bytes, Mapping[str, str]], Verification]


class _TooLarge(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Verifiers:
    github: tuple[str, ...]
    gitlab: tuple[str, ...]
    gitlab_signing: tuple[str, ...]
    gitea: tuple[str, ...]

    @classmethod
    def from_settings(cls, settings: Settings) -> Verifiers:
        return cls(
            settings.webhook_secrets("github"),
            settings.webhook_secrets("gitlab"),
            split_secrets(settings.gitlab_signing_secret),
            settings.webhook_secrets("gitea"),
        )

    def verify(self, forge: Forge, body: bytes, headers: Mapping[str, str]) -> Verification:
        if forge is Forge.GITHUB:
            return verify_github(body, headers, self.github)
        if forge is Forge.GITEA:
            return verify_gitea(body, headers, self.gitea)
        return verify_gitlab(
            body, headers, self.gitlab, signing_secrets=self.gitlab_signing, now=time.time()
        )

    def unconfigured(self) -> list[str]:
        return [f.value for f in Forge if not getattr(self, f.value)]


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _TooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def create_app(
    settings: Settings,
    queue: DeliveryQueue,
    *,
    queue_kind: str,
    redis_configured: bool,
) -> Starlette:
    verifiers = Verifiers.from_settings(settings)
    spool = Spool(settings.data_dir / "spool", settings.spool_max_files)
    metrics = Metrics(queue.depth, queue.states)
    history = history_store(settings.redis_url, settings.data_dir, settings.queue_name)
    deliveries = DeliveryLog(history)  # what the status page lists, refused deliveries too
    submitter: list[Submitter] = []

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        for forge in verifiers.unconfigured():
            log.warning(
                "no webhook secret for %s (ICHOR_%s_WEBHOOK_SECRET): its deliveries get 401",
                forge,
                forge.upper(),
            )
        submitter.append(Submitter(queue, spool))
        moved = submitter[0].drain_now()
        if moved:
            log.info("drained %d spooled deliveries at start-up", moved)
        submitter[0].start()
        # Everything alive now (modules, tables) lives as long as the process: keep it out of
        # the collector's full passes, which otherwise show up as latency spikes under load.
        gc.freeze()
        try:
            yield
        finally:
            await submitter[0].close()
            await deliveries.flush()
            history.close()

    async def webhook(request: Request) -> Response:
        forge = Forge(request.scope["path"].rsplit("/", 1)[-1])  # .url builds a whole URL
        started = time.perf_counter()
        response, event_name, outcome = await _handle(forge, request)
        metrics.deliveries.labels(forge.value, event_name, outcome).inc()
        metrics.latency.labels(forge.value).observe(time.perf_counter() - started)
        return response

    async def _handle(forge: Forge, request: Request) -> tuple[Response, str, str]:
        try:
            body = await _read_body(request, settings.max_body_bytes)
        except _TooLarge:
            deliveries.note(forge.value, 413, "too-large", "body over the size limit")
            return _json(413, "body over the size limit"), "-", "too-large"
        except ClientDisconnect:
            deliveries.note(forge.value, 400, "disconnected", "client disconnected")
            return _json(400, "client disconnected"), "-", "disconnected"
        headers = request.headers  # case-insensitive; lower-case keys when iterated
        verification = verifiers.verify(forge, body, headers)
        if not verification.ok:
            log.warning("%s delivery refused: %s", forge.value, verification.reason)
            deliveries.note(forge.value, 401, "unauthorized", verification.reason)
            return _json(401, verification.reason), "-", "unauthorized"
        try:
            delivery = parse_delivery(forge, headers, body)
        except WebhookError as exc:
            deliveries.note(forge.value, 400, "bad-request", str(exc))
            return _json(400, str(exc)), "-", "bad-request"
        name = delivery.event_name
        repo = getattr(getattr(delivery.event, "repo", None), "full_name", "-")
        if not is_actionable(delivery.event):
            reason = getattr(delivery.event, "reason", "pong")
            deliveries.note(
                forge.value,
                200,
                "ignored",
                reason,
                event=name,
                repository=repo,
                delivery_id=delivery.delivery_id,
            )
            return JSONResponse({"status": "ignored", "reason": reason}), name, "ignored"
        queued = QueuedDelivery(
            forge.value, delivery.delivery_id, name, event_to_dict(delivery.event)
        )
        outcome = await submitter[0].submit(queued)
        deliveries.note(
            forge.value,
            _STATUS[outcome],
            outcome.value,
            "queue down and spool full" if outcome is Outcome.UNAVAILABLE else "",
            event=name,
            repository=repo,
            delivery_id=delivery.delivery_id,
            job_id=None if outcome is Outcome.UNAVAILABLE else queued.job_id,
        )
        body_out = {"status": outcome.value, "job": queued.job_id}
        return JSONResponse(body_out, status_code=_STATUS[outcome]), name, outcome.value

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok\n")

    async def readyz(request: Request) -> Response:
        if redis_configured and not queue.ping():
            return PlainTextResponse("redis unreachable\n", status_code=503)
        return PlainTextResponse("ready\n")

    async def metrics_endpoint(request: Request) -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    routes: Sequence[BaseRoute] = [
        *(Route(f"/webhooks/{f.value}", webhook, methods=["POST"]) for f in Forge),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics_endpoint),
        # The status page, all its routes in one place (basic auth covers them all).
        *ui_routes(history, queue, deliveries, queue_kind=queue_kind),
    ]
    app = Starlette(routes=list(routes), lifespan=lifespan)
    app.state.spool = spool
    app.state.history = history
    return app


def _json(status: int, error: str) -> JSONResponse:
    return JSONResponse({"error": error}, status_code=status)
