"""The Starlette app: verify the raw body, parse, dedupe, enqueue — and nothing slower.

Order matters: nothing is parsed before the signature is verified (401), a body over the limit
is refused before it is read whole (413), one that does not fit in the budget for bodies in
flight is 503, malformed JSON is 400, an event the bot does not act on is answered 200 and
not queued, a duplicate is 200, a queued delivery 202, and only when the queue is down and
the spool full is the answer 503. No handler waits on Redis longer than
``redis_timeout_seconds``: a delivery is spooled, a page shows what it could look up.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from bot.queueing.base import DeliveryQueue, Outcome, QueuedDelivery
from bot.queueing.spool import Spool
from bot.repos import ForgeKind
from bot.settings import Settings, split_secrets
from bot.state.audit import audit_source
from bot.state.base import AuditLog
from bot.state.history import history_store
from bot.state.outcomes import OutcomeStore, forge_problems, outcome_store
from bot.state.rates import RateStore, rate_store
from bot.state.sweeps import SweepStore, sweep_store
from bot.web.auth import BasicAuth, StatusAuthMiddleware
from bot.web.changes_api import ChangeApi
from bot.web.command_rows import forge_urls
from bot.web.delivery_log import DeliveryLog
from bot.web.metrics import CONTENT_TYPE, Metrics, Upkept
from bot.web.offloop import OffLoop
from bot.web.request_body import BodyBudget, BodyRefusal, limited_body
from bot.web.setup_github import setup_routes
from bot.web.submitter import Submitter
from bot.web.ui import Outcomes, Upkeep, ui_routes
from bot.webhooks import (
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


_REFUSED = {
    BodyRefusal.TOO_LARGE: (413, "too-large"),
    BodyRefusal.NO_BUDGET: (503, "busy"),
    BodyRefusal.DISCONNECTED: (400, "disconnected"),
}


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

    def verify(self, forge: ForgeKind, body: bytes, headers: Mapping[str, str]) -> Verification:
        if forge is ForgeKind.GITHUB:
            return verify_github(body, headers, self.github)
        if forge is ForgeKind.GITEA:
            return verify_gitea(body, headers, self.gitea)
        return verify_gitlab(
            body, headers, self.gitlab, signing_secrets=self.gitlab_signing, now=time.time()
        )

    def unconfigured(self) -> list[str]:
        return [f.value for f in ForgeKind if not getattr(self, f.value)]


def create_app(
    settings: Settings,
    queue: DeliveryQueue,
    *,
    queue_kind: str,
    redis_configured: bool,
    audit: AuditLog | None = None,
) -> Starlette:
    """The app. ``audit`` is the in-process queue's audit log, shared with its jobs so the
    status page shows what they record; None reads the Redis stream when the bot runs on
    Redis (else there is nothing to show)."""
    verifiers = Verifiers.from_settings(settings)
    spool = Spool(settings.data_dir / "spool", settings.spool_max_files)
    metrics = Metrics(lambda: spool.quarantined)
    history = history_store(settings.redis_url, settings.data_dir, settings.queue_name)
    outcomes = outcome_store(settings.redis_url, settings.data_dir, settings.queue_name)
    rates = rate_store(settings.redis_url, settings.data_dir, settings.queue_name)
    sweeps = sweep_store(settings.redis_url, settings.queue_name)
    upkeep = Upkeep(rates, sweeps, settings.rate_reserve, settings.reconcile_interval)
    audit_log, close_audit = audit_source(settings, audit)
    # What the status page lists, refused deliveries too; written no slower than any look-up.
    deliveries = DeliveryLog(history, timeout=settings.redis_timeout_seconds)
    submitter: list[Submitter] = []
    budget = BodyBudget(max(settings.body_budget_bytes, settings.max_body_bytes))
    looks = OffLoop(settings.redis_timeout_seconds)
    auth = BasicAuth.parse(settings.status_auth) if settings.status_auth else None
    changes = ChangeApi(
        tokens=settings.api_tokens,
        queue=queue,
        submit=lambda delivery: submitter[0].submit(delivery),
        budget=budget,
        audit=audit_log,
        max_body_bytes=settings.max_body_bytes,
        wait_seconds=settings.api_wait_seconds,
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        for forge in verifiers.unconfigured():
            log.warning(
                "no webhook secret for %s (ICHOR_%s_WEBHOOK_SECRET): its deliveries get 401",
                forge,
                forge.upper(),
            )
        if not settings.api_tokens:
            log.info("no change API token (ICHOR_API_TOKENS): POST /api/v1/changes answers 401")
        submitter.append(Submitter(queue, spool, settings.redis_timeout_seconds))
        submitter[0].start()  # drains what an earlier run spooled, before anything new
        # Everything alive now (modules, tables) lives as long as the process: keep it out of
        # the collector's full passes, which otherwise show up as latency spikes under load.
        gc.freeze()
        try:
            yield
        finally:
            await submitter[0].close()
            await deliveries.flush()
            history.close()
            outcomes.close()
            rates.close()
            sweeps.close()
            close_audit()
            looks.close()
            changes.close()

    async def webhook(request: Request) -> Response:
        forge = ForgeKind(request.scope["path"].rsplit("/", 1)[-1])  # .url builds a whole URL
        started = time.perf_counter()
        response, event_name, outcome = await _handle(forge, request)
        metrics.deliveries.labels(forge.value, event_name, outcome).inc()
        metrics.latency.labels(forge.value).observe(time.perf_counter() - started)
        return response

    async def _handle(forge: ForgeKind, request: Request) -> tuple[Response, str, str]:
        # The body's bytes stay counted in the budget until it is parsed and handed over.
        async with limited_body(request, settings.max_body_bytes, budget) as body:
            if isinstance(body, BodyRefusal):
                status, outcome = _REFUSED[body]
                deliveries.note(forge.value, status, outcome, body.value)
                return _json(status, body.value), "-", outcome
            return await _accept(forge, request, body)

    async def _accept(forge: ForgeKind, request: Request, body: bytes) -> tuple[Response, str, str]:
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

    def forges() -> list[str]:
        return forge_problems(settings, outcomes, jobs_here=not redis_configured)

    def readiness() -> tuple[bool, list[str]]:
        up = queue.ping() if redis_configured else True
        try:
            return up, forges()
        except Exception as exc:
            return up, [f"which forges are half-configured is not known: {type(exc).__name__}"]

    async def readyz(request: Request) -> Response:
        # A half-configured forge is listed, not a reason to leave the rotation: every replica
        # has the same settings, and out of rotation the other forges' deliveries would fail
        # too. Only an unreachable Redis (where deliveries go) makes the process not ready.
        slow = (not redis_configured, ["which forges are half-configured is not known: timeout"])
        up, problems = await looks.call(readiness, slow)
        if not up:
            return PlainTextResponse("redis unreachable\n", status_code=503)
        return PlainTextResponse("".join(f"{line}\n" for line in ["ready", *problems]))

    async def metrics_endpoint(request: Request) -> Response:
        unknown: tuple[int, dict[str, int], dict[tuple[str, str], int] | None, Upkept | None] = (
            -1,
            {},
            None,
            None,
        )
        depth, states, unposted, upkept = await looks.call(
            lambda: (
                queue.depth(),
                queue.states(),
                _unposted_counts(outcomes),
                _upkept(rates, sweeps),
            ),
            unknown,
        )
        body = metrics.render(depth, states, unposted, upkept)
        return Response(body, media_type=CONTENT_TYPE)

    routes: Sequence[BaseRoute] = [
        *(Route(f"/webhooks/{f.value}", webhook, methods=["POST"]) for f in ForgeKind),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics_endpoint),
        # The status page, all its routes in one place (basic auth covers them all).
        *ui_routes(
            history,
            queue,
            deliveries,
            queue_kind=queue_kind,
            looks=looks,
            audit=audit_log,
            forge_urls=forge_urls(settings),
            outcomes=Outcomes(outcomes, forges),
            upkeep=upkeep,
            refresh=settings.status_refresh,
        ),
        *setup_routes(settings),  # empty unless ICHOR_SETUP_ENABLED
        *changes.routes(),  # the change API: bearer tokens of its own, never basic auth
    ]
    app = Starlette(routes=list(routes), lifespan=lifespan)
    if auth is not None:
        app.add_middleware(StatusAuthMiddleware, auth=auth)
    app.state.spool = spool
    app.state.history = history
    app.state.outcomes = outcomes
    app.state.audit = audit_log
    app.state.changes = changes
    return app


def _unposted_counts(outcomes: OutcomeStore) -> dict[tuple[str, str], int] | None:
    try:
        return outcomes.unposted_counts()
    except Exception:  # the queue's numbers still show; the counter is left out
        log.warning("the count of jobs that ended unposted cannot be read now", exc_info=True)
        return None


def _upkept(rates: RateStore, sweeps: SweepStore) -> Upkept | None:
    try:
        return Upkept(rates.budgets(), sweeps.counts(), sweeps.runs())
    except Exception:  # the queue's numbers still show; these are left out
        log.warning("the rate limits and sweeps cannot be read now", exc_info=True)
        return None


def _json(status: int, error: str) -> JSONResponse:
    return JSONResponse({"error": error}, status_code=status)
