"""The App's webhook deliveries: the recent ones (``GET /app/hook/deliveries``, newest first,
paged by cursor) and asking for one again (``POST /app/hook/deliveries/{id}/attempts``), both
as the App itself (its JWT). Which to ask for is :mod:`bot.forges.github.redelivery`'s."""

from __future__ import annotations

import datetime
from typing import Any

from bot.errors import PermanentForgeError
from bot.forges.github.app_calls import AppCalls
from bot.forges.github.redelivery import HookDelivery

PER_PAGE = 100  # GitHub's largest page
WHERE = "GitHub GET /app/hook/deliveries"


def recent(calls: AppCalls, *, since: float, max_pages: int) -> list[HookDelivery]:
    """The attempts delivered at or after ``since`` (epoch seconds), at most ``max_pages``
    pages of them, newest first."""
    found: list[HookDelivery] = []
    url: str | None = f"/app/hook/deliveries?per_page={PER_PAGE}"
    for _ in range(max_pages):
        if url is None:
            break
        page = calls.as_app(url)
        if not isinstance(page.data, list):
            raise PermanentForgeError(f"{WHERE}: the response is not a list")
        listed = [hook_delivery(item) for item in page.data]
        found += [d for d in listed if d.delivered_at >= since]
        if not listed or min(d.delivered_at for d in listed) < since:
            break  # older ones follow: past the window
        url = page.next_url
    return found


def redeliver(calls: AppCalls, delivery_id: int) -> None:
    """Ask GitHub to deliver attempt ``delivery_id``'s delivery again (same GUID)."""
    calls.app_post(f"/app/hook/deliveries/{int(delivery_id)}/attempts")


def hook_delivery(item: Any) -> HookDelivery:
    """One listed attempt; a field missing or mistyped is a PermanentForgeError."""
    if not isinstance(item, dict):
        raise PermanentForgeError(f"{WHERE}: a delivery is not an object")
    try:
        return HookDelivery(
            id=_int(item["id"]),
            guid=str(item["guid"]),
            delivered_at=_time(item["delivered_at"]),
            redelivery=bool(item.get("redelivery")),
            status_code=_int(item.get("status_code") or 0),
            event=str(item["event"]),
            action=None if item.get("action") is None else str(item["action"]),
            installation_id=_optional_int(item.get("installation_id")),
            repository_id=_optional_int(item.get("repository_id")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise PermanentForgeError(f"{WHERE}: a delivery is unreadable ({exc})") from None


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{value!r} is not an integer")
    return value


def _optional_int(value: Any) -> int | None:
    return None if value is None else _int(value)


def _time(value: Any) -> float:
    parsed = datetime.datetime.fromisoformat(str(value))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return parsed.timestamp()
