"""One webhook request (its route's forge, headers and raw body) as a ``Delivery``.

Dispatch is by the route's forge and that forge's own headers only: Forgejo and Gitea also
send ``X-GitHub-Event``, and reading it on the gitea route would let one forge's conventions
leak into another's. ``headers`` must have lower-case keys (the caller lower-cases, or passes a
case-insensitive mapping such as Starlette's ``Headers``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.repos import ForgeKind
from bot.webhooks.events import Delivery
from bot.webhooks.gitea import parse_gitea
from bot.webhooks.github import parse_github
from bot.webhooks.gitlab import parse_gitlab
from bot.webhooks.payload import WebhookError, parse_json

# Delivery ids become dedupe and job keys, event names metric labels: printable ASCII only.
_DELIVERY_ID = re.compile(r"[\x21-\x7e]{1,200}")
_EVENT_NAME = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]{0,98}[\x21-\x7e])?")


def parse_delivery(forge: ForgeKind, headers: Mapping[str, str], body: bytes) -> Delivery:
    """The delivery's ids and event; a WebhookError (answered 400) when either is unusable."""
    if forge is ForgeKind.GITHUB:
        name = _event_name(headers, "X-GitHub-Event")
        delivery_id = _delivery_id(headers, "X-GitHub-Delivery")
        return Delivery(forge, "github", name, delivery_id, parse_github(name, parse_json(body)))
    if forge is ForgeKind.GITLAB:
        name = _event_name(headers, "X-Gitlab-Event")
        # webhook-id equals Idempotency-Key and, with a signing token, is the signed one, so a
        # replay cannot dodge deduplication by changing an unsigned header.
        delivery_id = _delivery_id(headers, "webhook-id", "Idempotency-Key", "X-Gitlab-Event-UUID")
        return Delivery(forge, "gitlab", name, delivery_id, parse_gitlab(name, parse_json(body)))
    forgejo = any(key.lower().startswith("x-forgejo-") for key in headers)
    name = _event_name(headers, "X-Forgejo-Event", "X-Gitea-Event")
    event_type = headers.get("x-forgejo-event-type") or headers.get("x-gitea-event-type")
    delivery_id = _delivery_id(headers, "X-Forgejo-Delivery", "X-Gitea-Delivery")
    event = parse_gitea(name, event_type, parse_json(body))
    return Delivery(forge, "forgejo" if forgejo else "gitea", name, delivery_id, event)


def _first(headers: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = headers.get(name.lower())
        if value:
            return value
    return None


def _event_name(headers: Mapping[str, str], *names: str) -> str:
    value = _first(headers, names)
    if value is None:
        raise WebhookError(f"missing {names[-1]} header")
    if not _EVENT_NAME.fullmatch(value):
        raise WebhookError(f"{names[-1]} header is not an event name")
    return value


def _delivery_id(headers: Mapping[str, str], *names: str) -> str:
    value = _first(headers, names)
    if value is None:
        raise WebhookError(f"missing delivery id ({' or '.join(names)} header)")
    if not _DELIVERY_ID.fullmatch(value):
        raise WebhookError(f"{' / '.join(names)} header is not a delivery id")
    return value
