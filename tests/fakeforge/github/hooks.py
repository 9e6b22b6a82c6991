"""The app's webhook on the fake GitHub: deliveries as GitHub records them, the listing of
recent ones (``GET /app/hook/deliveries``, newest first, by cursor) and a redelivery (``POST
/app/hook/deliveries/{id}/attempts``), which this fake sends at once, signed, to the webhook
URL it was given (:meth:`HooksMixin.set_webhook`), and records as a new attempt under the same
GUID, marked a redelivery, with the status the receiver answered (0 when nothing answered).

A test makes the deliveries GitHub tried while the bot was away with :meth:`add_delivery`
(a failed attempt, nothing sent), or sends one now with :meth:`deliver`."""

from __future__ import annotations

import copy
import hashlib
import hmac
import http.client
import json
import uuid
from typing import Any
from urllib.parse import urlsplit

from tests.fakeforge.github.core import GitHubCore
from tests.fakeforge.github.model import Ctx, error, iso, not_found, time_now
from tests.fakeforge.httpserver import Response

_SEND_TIMEOUT = 10.0  # GitHub gives a receiver ten seconds


class HooksMixin(GitHubCore):
    # ------------------------------------------------------------------ test set-up
    def set_webhook(self, url: str, secret: str) -> None:
        """Where (and signed with what) deliveries are sent."""
        with self._lock:
            self._webhook = (url, secret)

    def add_delivery(
        self,
        event: str,
        payload: dict[str, Any],
        *,
        status_code: int = 502,
        guid: str | None = None,
        at: float | None = None,
    ) -> dict[str, Any]:
        """A delivery GitHub attempted, answered ``status_code`` (0: nothing answered), without
        sending anything: what the app's webhook log holds after the bot was away."""
        with self._lock:
            return self._attempt(
                guid or str(uuid.uuid4()), event, payload, status_code, redelivery=False, at=at
            )

    def deliver(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Send a new delivery now, as GitHub would, and record the attempt."""
        guid = str(uuid.uuid4())
        status = self._send(guid, event, payload)
        with self._lock:
            return self._attempt(guid, event, payload, status, redelivery=False)

    def hook_deliveries(self) -> list[dict[str, Any]]:
        """Every attempt, oldest first, as the listing shows it."""
        with self._lock:
            return [self._item(d) for d in self._deliveries]

    # ------------------------------------------------------------------ handlers
    def _op_apps_list_webhook_deliveries(self, ctx: Ctx) -> Response:
        per_page = max(1, min(100, int(ctx.req.query.get("per_page") or 30)))
        newest = sorted(self._deliveries, key=lambda d: d["id"], reverse=True)
        status = ctx.req.query.get("status")
        if status is not None:
            ok = status == "success"
            newest = [d for d in newest if (200 <= d["status_code"] < 300) == ok]
        cursor = ctx.req.query.get("cursor")
        if cursor is not None:
            start = int(cursor.removeprefix("v1_")) if cursor.removeprefix("v1_").isdigit() else 0
            newest = [d for d in newest if d["id"] <= start]
        page, rest = newest[:per_page], newest[per_page:]
        headers = {}
        if rest:
            query = f"per_page={per_page}&cursor=v1_{rest[0]['id']}"
            headers["link"] = f'<{self.url}/app/hook/deliveries?{query}>; rel="next"'
        return Response(200, [self._item(d) for d in page], headers)

    def _op_apps_redeliver_webhook_delivery(self, ctx: Ctx) -> Response:
        wanted = int(ctx.params["delivery_id"])
        found = next((d for d in self._deliveries if d["id"] == wanted), None)
        if found is None:
            return not_found()
        if self._webhook is None:
            return Response(422, error("This hook has no URL to deliver to.", 422))
        status = self._send(found["guid"], found["event"], found["payload"])
        self._attempt(found["guid"], found["event"], found["payload"], status, redelivery=True)
        return Response(202, {})

    # ------------------------------------------------------------------ plumbing
    def _attempt(
        self,
        guid: str,
        event: str,
        payload: dict[str, Any],
        status_code: int,
        *,
        redelivery: bool,
        at: float | None = None,
    ) -> dict[str, Any]:
        installation = payload.get("installation")
        repository = payload.get("repository")
        delivery = {
            "id": self._next_id("hook-delivery"),
            "guid": guid,
            "delivered_at": time_now() if at is None else at,
            "redelivery": redelivery,
            "status_code": status_code,
            "event": event,
            "action": payload.get("action"),
            "installation_id": installation.get("id") if isinstance(installation, dict) else None,
            "repository_id": self._repository_id(repository),
            "payload": copy.deepcopy(payload),
        }
        self._deliveries.append(delivery)
        return self._item(delivery)

    def _repository_id(self, repository: Any) -> int | None:
        if not isinstance(repository, dict):
            return None
        known = self._repos.get(str(repository.get("full_name")))
        return known.id if known is not None else repository.get("id")

    @staticmethod
    def _item(delivery: dict[str, Any]) -> dict[str, Any]:
        code = delivery["status_code"]
        return {
            "id": delivery["id"],
            "guid": delivery["guid"],
            "delivered_at": iso(delivery["delivered_at"]),
            "redelivery": delivery["redelivery"],
            "duration": 0.05,
            "status": "OK" if 200 <= code < 300 else f"Invalid HTTP Response: {code}",
            "status_code": code,
            "event": delivery["event"],
            "action": delivery["action"],
            "installation_id": delivery["installation_id"],
            "repository_id": delivery["repository_id"],
            "throttled_at": None,
        }

    def _send(self, guid: str, event: str, payload: dict[str, Any]) -> int:
        """POST the delivery to the webhook, signed; the status answered, 0 when none was."""
        if self._webhook is None:
            return 0
        url, secret = self._webhook
        body = json.dumps(payload).encode()
        signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        headers = {
            "content-type": "application/json",
            "user-agent": "GitHub-Hookshot/fake",
            "x-github-event": event,
            "x-github-delivery": guid,
            "x-hub-signature-256": f"sha256={signature}",
        }
        parts = urlsplit(url)
        conn = http.client.HTTPConnection(
            parts.hostname or "127.0.0.1", parts.port, timeout=_SEND_TIMEOUT
        )
        try:
            conn.request("POST", parts.path or "/", body=body, headers=headers)
            return conn.getresponse().status
        except OSError:
            return 0
        finally:
            conn.close()
