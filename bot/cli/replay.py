"""``ichor-bot replay``: sign a recorded payload the way its forge would, and post it."""

from __future__ import annotations

import hashlib
import hmac
import uuid
from pathlib import Path

import httpx

from bot.errors import UsageError

GITLAB_EVENTS = {
    "push": "Push Hook",
    "tag_push": "Tag Push Hook",
    "merge_request": "Merge Request Hook",
    "note": "Note Hook",
    "issue": "Issue Hook",
}


def event_from_name(path: Path) -> str:
    """``<event>__<variant>.json`` (the fixtures' naming) or ``<event>.<action>.json``."""
    stem = path.name.removesuffix(".json")
    return stem.split("__")[0].split(".")[0]


def signed_headers(
    forge: str, body: bytes, event: str, secret: str, delivery: str
) -> dict[str, str]:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if forge == "github":
        return {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery,
            "X-Hub-Signature-256": f"sha256={digest}",
        }
    if forge in ("gitea", "forgejo"):
        prefix = "X-Forgejo" if forge == "forgejo" else "X-Gitea"
        return {
            f"{prefix}-Event": event,
            f"{prefix}-Event-Type": event,
            f"{prefix}-Delivery": delivery,
            f"{prefix}-Signature": digest,
        }
    if forge == "gitlab":
        return {
            "X-Gitlab-Event": GITLAB_EVENTS.get(event, event),
            "X-Gitlab-Token": secret,
            "Idempotency-Key": delivery,
            "X-Gitlab-Event-UUID": delivery,
        }
    raise UsageError(f"unknown forge {forge!r} (github, gitlab, gitea, forgejo)")


def replay(
    file: str,
    *,
    forge: str,
    url: str,
    secret: str,
    event: str | None = None,
    delivery: str | None = None,
) -> httpx.Response:
    path = Path(file)
    try:
        body = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {file}: {exc.strerror}") from None
    headers = signed_headers(
        forge, body, event or event_from_name(path), secret, delivery or str(uuid.uuid4())
    )
    headers["Content-Type"] = "application/json"
    route = "gitea" if forge == "forgejo" else forge
    target = url.rstrip("/") + f"/webhooks/{route}"
    try:
        return httpx.post(target, content=body, headers=headers, timeout=30)
    except httpx.HTTPError as exc:
        raise UsageError(f"cannot post to {target}: {exc}") from None
