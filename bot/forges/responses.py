"""Reading forge answers: GitHub and Gitea shape a pull request alike in the fields the bot
reads, so one reader serves both. A missing field is a PermanentForgeError naming the call."""

from __future__ import annotations

from typing import Any

from bot.errors import PermanentForgeError
from bot.forges.base import PullRequestRef


def field(body: Any, key: str, where: str) -> Any:
    """``body[key]``; ``where`` names the forge and the call, e.g. ``"GitHub GET /repos/..."``."""
    if not isinstance(body, dict) or body.get(key) is None:
        raise PermanentForgeError(f"{where}: the response has no {key}")
    return body[key]


def side(item: Any, key: str) -> dict[str, Any]:
    """A pull request's ``head`` or ``base`` object (empty when absent)."""
    value = item.get(key) if isinstance(item, dict) else None
    return value if isinstance(value, dict) else {}


def pull_ref(item: Any, where: str) -> PullRequestRef:
    number = int(field(item, "number", where))
    head, base = side(item, "head"), side(item, "base")
    return PullRequestRef(
        number=number,
        url=str(item.get("html_url") or ""),
        head_sha=head.get("sha") or None,
        base_sha=base.get("sha") or None,
        base_ref=base.get("ref") or None,
    )
