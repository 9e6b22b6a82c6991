"""``POST /api/v1/changes`` and its OpenAPI document (design.md 6.5): a checked change request
becomes a queued job, and the answer is that job's result.

Order: the bearer token first (401, before the body is read; no token configured means every
request is 401), then the body within 64 KiB and the shared budget for bodies in flight
(413, 503), JSON (400), every field (422, naming it); then the job, queued like a delivery
and deduplicated by an idempotency key (the ``Idempotency-Key`` header, else the request's
digest within a ten-minute window), so a retried POST is one job. The engine runs in a
worker: the handler polls the queue for the job's result, off the event loop and at most
``api_wait_seconds`` (504 after that; the job goes on, and the same request again answers
with its result). Requests refused here leave an audit record too (their actor is known);
the job writes the record of every request it runs.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from bot.queueing.base import DeliveryQueue, Outcome, QueuedDelivery
from bot.state.audit import AuditTrail, utc_now
from bot.state.base import AuditLog
from bot.web.changes_model import (
    MAX_ERRORS,
    ChangeBody,
    read_body,
    request_digest,
    to_event,
)
from bot.web.offloop import OffLoop
from bot.web.openapi import CHANGES_PATH, OPENAPI_PATH, openapi_document
from bot.web.request_body import BodyBudget, BodyRefusal, limited_body
from bot.webhooks import event_to_dict

log = logging.getLogger("ichor.web.api")
MAX_BODY_BYTES = 64 << 10
KEY_WINDOW_SECONDS = 600  # without an Idempotency-Key, the same body this long is one job
_KEY = re.compile(r"[!-~]{1,200}")  # printable ASCII, no space
_POLL_FIRST, _POLL_MAX = 0.05, 0.5  # seconds between looks at the job
_ENDED = frozenset({"failed", "stopped", "canceled"})
_REFUSED = {
    BodyRefusal.TOO_LARGE: (413, f"the body is over {MAX_BODY_BYTES >> 10} KiB"),
    BodyRefusal.NO_BUDGET: (503, "too many large requests in flight; retry later"),
    BodyRefusal.DISCONNECTED: (400, "the client disconnected"),
}
Submit = Callable[[QueuedDelivery], Awaitable[Outcome]]


def authenticated(header: str | None, tokens: Sequence[tuple[str, str]]) -> str | None:
    """The name of the token ``Authorization: Bearer <token>`` carries, or None. Every
    configured token is compared, in constant time and through fixed-length digests,
    whichever matches: the time taken says nothing about which token, how much of one or how
    long one was right."""
    scheme, _, credential = (header or "").strip().partition(" ")
    given = credential.strip() if scheme.lower() == "bearer" else ""
    digest = hashlib.sha256(given.encode("utf-8", "surrogateescape")).digest()
    found: str | None = None
    for name, token in tokens:
        matched = hmac.compare_digest(digest, hashlib.sha256(token.encode()).digest())
        if matched and found is None and given:
            found = name
    return found


def api_delivery_id(actor: str, key: str) -> str:
    """The job's delivery id: one per client and key, so clients never share a job (the job
    id is ``<forge>-<this>``)."""
    return "api-" + hashlib.sha256(f"{actor}\n{key}".encode()).hexdigest()[:40]


class ChangeApi:
    """The routes and what they share: the queue, the budget for bodies, the audit log and a
    small pool for the blocking looks at the job (synchronous Redis)."""

    def __init__(
        self,
        *,
        tokens: Sequence[tuple[str, str]],
        queue: DeliveryQueue,
        submit: Submit,
        budget: BodyBudget,
        audit: AuditLog,
        max_body_bytes: int = MAX_BODY_BYTES,
        wait_seconds: float = 60.0,
        look_timeout: float = 2.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.tokens = tuple(tokens)
        self.queue = queue
        self.submit = submit
        self.budget = budget
        self.max_body_bytes = min(max_body_bytes, MAX_BODY_BYTES)
        self.wait_seconds = wait_seconds
        self.clock = clock
        self.looks = OffLoop(look_timeout, threads=4, name="ichor-api")
        self.trail = AuditTrail(audit, clock=utc_now)
        self.document = openapi_document()

    def routes(self) -> list[BaseRoute]:
        return [
            Route(CHANGES_PATH, self.changes, methods=["POST"]),
            Route(OPENAPI_PATH, self.openapi, methods=["GET"]),
        ]

    def close(self) -> None:
        self.looks.close()

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(self.document)

    async def changes(self, request: Request) -> Response:
        actor = authenticated(request.headers.get("authorization"), self.tokens)
        if actor is None:
            why = "no API token is configured" if not self.tokens else "no valid bearer token"
            log.warning("change API request refused: %s", why)
            return _error(401, why, headers={"WWW-Authenticate": 'Bearer realm="ichor"'})
        async with limited_body(request, self.max_body_bytes, self.budget) as raw:
            if isinstance(raw, BodyRefusal):
                status, why = _REFUSED[raw]
                return await self._refused(actor, None, status, why)
            checked = read_body(raw)
        if checked is None:
            return await self._refused(actor, None, 400, "the body is not JSON (or too deep)")
        if not isinstance(checked, ChangeBody):
            return await self._refused(actor, None, 422, "", problems=checked)
        key = request.headers.get("idempotency-key")
        if key is not None and not _KEY.fullmatch(key):
            problems = [("Idempotency-Key", "1 to 200 printable ASCII characters, no space")]
            return await self._refused(actor, checked, 422, "", problems=problems)
        return await self._queued(actor, checked, key)

    async def _queued(self, actor: str, body: ChangeBody, key: str | None) -> Response:
        digest = request_digest(actor, body)
        if key is None:
            key = f"{digest}:{int(self.clock() // KEY_WINDOW_SECONDS)}"
        delivery_id = api_delivery_id(actor, key)
        event = to_event(actor, body, digest)
        queued = QueuedDelivery(body.forge, delivery_id, "change_api", event_to_dict(event))
        outcome = await self.submit(queued)
        if outcome is Outcome.UNAVAILABLE:
            return _error(503, "the queue is down; retry later")
        if outcome is Outcome.SPOOLED:  # no worker can answer before the queue is back
            return _error(
                504,
                "the queue is down: the request is kept and runs once it is back; the same "
                "request again answers with its result",
                job=queued.job_id,
            )
        log.info("change API %s from %s: job %s %s", body.verb, actor, queued.job_id, outcome)
        return await self._answer(queued.job_id, digest)

    async def _answer(self, job_id: str, digest: str) -> Response:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait_seconds
        delay = _POLL_FIRST
        while True:
            unknown: tuple[str | None, Any] = (None, None)  # busy or slow: look again
            state, result = await self.looks.call(lambda: self._look(job_id), unknown)
            if state == "finished":
                return answer(result, digest, job_id)
            if state in _ENDED:
                return _error(502, "the change job failed; sending the request again runs it again")
            left = deadline - loop.time()
            if left <= 0:
                return _error(
                    504,
                    f"no answer from a worker within {self.wait_seconds:g} s; the job goes on, "
                    "and the same request again answers with its result",
                    job=job_id,
                )
            await asyncio.sleep(min(delay, left))
            delay = min(delay * 2, _POLL_MAX)

    def _look(self, job_id: str) -> tuple[str | None, Any]:
        state = self.queue.job_state(job_id)
        return state, self.queue.job_result(job_id) if state == "finished" else None

    async def _refused(
        self,
        actor: str,
        body: ChangeBody | None,
        status: int,
        why: str,
        *,
        problems: Sequence[tuple[str, str]] = (),
    ) -> Response:
        """The answer to a request refused before it was queued, and its audit record."""
        listed = [{"field": f, "message": m} for f, m in problems[:MAX_ERRORS]]
        if problems:
            why = f"{problems[0][0]}: {problems[0][1]}"

        def write() -> bool:
            self.trail.record(
                forge=body.forge if body is not None else "-",
                repo=body.repository if body is not None else "-",
                actor=actor,
                verb=body.verb if body is not None else "-",
                result=f"refused: {status} {why}",
                target=body.target if body is not None else None,
                object=_shown(body),
            )
            return True

        if not await self.looks.call(write, False):
            log.warning("audit record of a refused change API request by %s not written", actor)
        extra: dict[str, Any] = {"field": problems[0][0], "errors": listed} if problems else {}
        return _error(status, why, **extra)


def _shown(body: ChangeBody | None) -> str | None:
    obj = body.object if body is not None else None
    return None if obj is None else f"{obj.kind} {obj.namespace or '_'}/{obj.name}"


def answer(result: Any, digest: str, job_id: str) -> Response:
    """The HTTP answer for a finished job's summary."""
    if not isinstance(result, dict) or "result" not in result:
        return _error(502, "the job's answer is not one the API understands", job=job_id)
    if result.get("request") != digest:
        return _error(
            422,
            "this Idempotency-Key was used for another request",
            field="Idempotency-Key",
        )
    outcome = result["result"]
    if outcome in ("pr-opened", "pr-existing"):
        return JSONResponse(
            {
                "pull_request_url": result.get("pull_request_url"),
                "branch": result.get("branch"),
                "created": outcome == "pr-opened",
            }
        )
    reason = str(result.get("reason") or outcome)
    if outcome == "refused":
        return _error(409, reason, branch=result.get("branch"))
    return _error(502, reason)


def _error(
    status: int, error: str, headers: dict[str, str] | None = None, **extra: Any
) -> Response:
    body = {"error": error, **{k: v for k, v in extra.items() if v is not None}}
    return JSONResponse(body, status_code=status, headers=headers)
