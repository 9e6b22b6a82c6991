"""Jobs the queue runs. Each takes JSON-safe arguments and returns a JSON-safe summary.

``handle_delivery`` is the one entry point for webhook deliveries; it turns the event back
into its typed form and dispatches on it. The check pipeline and comment commands plug in
here as they arrive; until then an event is acknowledged and logged.
"""

from __future__ import annotations

import logging
from typing import Any

from bot.webhooks import event_from_dict

log = logging.getLogger("ichor.jobs")


def handle_delivery(forge: str, delivery_id: str, event: dict[str, Any]) -> dict[str, Any]:
    typed = event_from_dict(event)
    kind = type(typed).__name__
    log.info("delivery %s from %s: %s", delivery_id, forge, kind)
    return {"forge": forge, "delivery": delivery_id, "event": kind, "handled": True}
