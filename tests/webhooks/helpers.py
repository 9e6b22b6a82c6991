"""Headers each forge sends, and their signatures, for tests that build deliveries by hand."""

from __future__ import annotations

import base64
import hashlib
import hmac

from tests.conftest import FIXTURES


def raw(name: str) -> bytes:
    """A recorded payload's exact bytes (what a forge would have signed)."""
    return (FIXTURES / "webhooks" / name).read_bytes()


def hex_hmac(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def github_headers(event: str, delivery: str = "gh-delivery-1") -> dict[str, str]:
    return {
        "user-agent": "GitHub-Hookshot/abc123",
        "x-github-event": event,
        "x-github-delivery": delivery,
        "x-github-hook-id": "109948940",
    }


def gitlab_headers(
    event: str,
    idempotency_key: str | None = "gl-idem-1",
    event_uuid: str | None = "gl-event-uuid-1",
) -> dict[str, str]:
    headers = {"user-agent": "GitLab/18.3.0", "x-gitlab-event": event}
    if idempotency_key is not None:
        headers["idempotency-key"] = idempotency_key
    if event_uuid is not None:
        headers["x-gitlab-event-uuid"] = event_uuid
    return headers


def gitea_headers(
    event: str, event_type: str | None = None, delivery: str = "gt-delivery-1"
) -> dict[str, str]:
    """What Gitea sends: its own headers plus the GitHub-style ones it copies."""
    kind = event_type or event
    return {
        "x-gitea-event": event,
        "x-gitea-event-type": kind,
        "x-gitea-delivery": delivery,
        "x-gogs-event": event,
        "x-github-event": event,
        "x-github-event-type": kind,
        "x-github-delivery": delivery,
    }


def forgejo_headers(
    event: str, event_type: str | None = None, delivery: str = "fj-delivery-1"
) -> dict[str, str]:
    kind = event_type or event
    return {
        "x-forgejo-event": event,
        "x-forgejo-event-type": kind,
        "x-forgejo-delivery": delivery,
        **gitea_headers(event, event_type, delivery),
    }


def standard_webhooks_signature(key_b64: str, webhook_id: str, timestamp: str, body: bytes) -> str:
    key = base64.b64decode(key_b64)
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
