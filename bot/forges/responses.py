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


def pull_author(item: Any) -> str | None:
    """The login of who opened a pull request (``user.login`` on GitHub and Gitea)."""
    user = item.get("user") if isinstance(item, dict) else None
    login = user.get("login") if isinstance(user, dict) else None
    return str(login) if login else None


def pull_state(item: Any) -> str | None:
    """ "open", "closed" or "merged": GitHub and Gitea say ``closed`` of a merged pull request
    too, and tell it by ``merged`` (a pull's own page) or ``merged_at`` (a listing's item)."""
    if not isinstance(item, dict):
        return None
    if item.get("merged") is True or item.get("merged_at"):
        return "merged"
    state = item.get("state")
    return str(state) if state else None
