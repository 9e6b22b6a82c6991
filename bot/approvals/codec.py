"""Approvals and shown checks as JSON: the one encoding the stores (Redis) and the bot's reply
markers (:mod:`bot.approvals.marker`) both use. Pure."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from bot.approvals.approval import Approval, Fingerprint
from bot.approvals.seen import ShownCheck


def approval_to_dict(approval: Approval) -> dict[str, Any]:
    return {
        "approver": approval.approver,
        "head_sha": approval.head_sha,
        "fingerprints": sorted([f.identity, f.digest] for f in approval.fingerprints),
        "source": approval.source,
        "reply": approval.reply,
    }


def approval_from_dict(data: Any) -> Approval:
    """Raises ValueError (or KeyError/TypeError) on anything that is not one of ours."""
    fingerprints = frozenset(
        Fingerprint(str(identity), str(digest)) for identity, digest in data["fingerprints"]
    )
    reply = data.get("reply")
    return Approval(
        approver=str(data["approver"]),
        head_sha=str(data["head_sha"]),
        fingerprints=fingerprints,
        source=str(data["source"]),
        reply=None if reply is None else str(reply),
    )


def shown_to_json(check: ShownCheck) -> str:
    return json.dumps(
        {
            "head_sha": check.head_sha,
            "published_at": check.published_at.isoformat(),
            "waiting": sorted([f.identity, f.digest] for f in check.waiting),
        },
        sort_keys=True,
    )


def shown_from_json(text: str) -> ShownCheck:
    """Raises ValueError (or KeyError/TypeError) on anything that is not one of ours."""
    data = json.loads(text)
    published_at = datetime.fromisoformat(str(data["published_at"]))
    if published_at.tzinfo is None:
        raise ValueError("published_at names no time zone")
    waiting = frozenset(Fingerprint(str(i), str(d)) for i, d in data["waiting"])
    return ShownCheck(str(data["head_sha"]), published_at, waiting)
