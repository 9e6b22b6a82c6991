"""The hidden markers that keep approvals on the forge, in the bot's own reply comments.

    <!-- ichor:approval v1 <base64url(JSON of bot.approvals.codec.approval_to_dict)> -->
    <!-- ichor:approval-cancel v1 <base64url(JSON {"approver": ..., "source": ...})> -->

When the approval store has lost a pull request's record, the approvals are rebuilt from these:
only from comments by the bot's own login that were never edited (anyone can write a marker,
and an edit is not the bot's), replayed oldest first, so a later approval replaces that
approver's earlier one and a cancel removes it. Anything malformed is skipped, and the work is
bounded however many or large the comments are. Pure.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from bot.approvals.approval import Approval
from bot.approvals.codec import approval_from_dict, approval_to_dict
from bot.forges.base import ForgeComment

APPROVAL_MARKER = "ichor:approval v1"
CANCEL_MARKER = "ichor:approval-cancel v1"

# The bot's own comments read, newest kept: more than any pull request's worth of approvals.
MAX_COMMENTS = 5000
# Characters of one comment searched (GitLab's limit for a note; GitHub's is 65,536).
MAX_BODY_CHARS = 1_000_000
MAX_MARKERS_PER_COMMENT = 10
MAX_FINGERPRINTS = 10_000
_MAX_TEXT = 2000  # an identity, a source or a reply URL
_MAX_LOGIN = 255

_MARKER = re.compile(r"<!-- ichor:(approval|approval-cancel) v1 ([A-Za-z0-9_-]+={0,2}) -->")
_DIGEST = re.compile(r"[0-9a-f]{64}")
_SHA = re.compile(r"[0-9a-f]{7,64}")


def _encode(data: dict[str, Any]) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return base64.urlsafe_b64encode(text.encode("ascii")).decode("ascii").rstrip("=")


def approval_marker(approval: Approval) -> str:
    """The hidden line a reply carries for ``approval`` (its ``reply`` is usually unset yet:
    read back, an approval without one gets the URL of the comment it was found in)."""
    return f"<!-- {APPROVAL_MARKER} {_encode(approval_to_dict(approval))} -->"


def cancel_marker(approver: str, source: str) -> str:
    """The hidden line a reply carries when ``approver`` withdraws their approval."""
    return f"<!-- {CANCEL_MARKER} {_encode({'approver': approver, 'source': source})} -->"


def _decode(payload: str) -> Any:
    padded = payload + "=" * (-len(payload) % 4)
    try:
        return json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (binascii.Error, ValueError, RecursionError):
        return None


def _text(value: object, limit: int = _MAX_TEXT) -> bool:
    return isinstance(value, str) and 0 < len(value) <= limit


def _well_formed(data: Any) -> bool:
    """Exactly what :func:`approval_marker` writes, and nothing the store would coerce."""
    if not isinstance(data, dict) or set(data) != {
        "approver",
        "head_sha",
        "fingerprints",
        "source",
        "reply",
    }:
        return False
    prints = data["fingerprints"]
    return (
        _text(data["approver"], _MAX_LOGIN)
        and isinstance(data["head_sha"], str)
        and _SHA.fullmatch(data["head_sha"]) is not None
        and _text(data["source"])
        and (data["reply"] is None or _text(data["reply"]))
        and isinstance(prints, list)
        and len(prints) <= MAX_FINGERPRINTS
        and all(
            isinstance(p, list)
            and len(p) == 2
            and _text(p[0])
            and isinstance(p[1], str)
            and _DIGEST.fullmatch(p[1]) is not None
            for p in prints
        )
    )


def read_approval(payload: str, url: str | None = None) -> Approval | None:
    """The approval in one marker's payload, or None when it is not one of ours."""
    data = _decode(payload)
    if not _well_formed(data):
        return None
    if data["reply"] is None and url is not None:
        data["reply"] = url
    return approval_from_dict(data)


def read_cancel(payload: str) -> str | None:
    """The approver a cancel marker's payload names, or None when it is not one of ours."""
    data = _decode(payload)
    if not isinstance(data, dict) or set(data) != {"approver", "source"}:
        return None
    if not (_text(data["approver"], _MAX_LOGIN) and _text(data["source"])):
        return None
    approver: str = data["approver"]
    return approver


def _markers(body: str) -> Iterator[tuple[str, str]]:
    for n, match in enumerate(_MARKER.finditer(body[:MAX_BODY_CHARS])):
        if n >= MAX_MARKERS_PER_COMMENT:
            return
        yield match.group(1), match.group(2)


def approvals_from_comments(
    comments: Sequence[ForgeComment], bot_login: str
) -> tuple[Approval, ...]:
    """The approvals the bot's own unedited comments record, oldest first (the newest
    approval of each approver last), as :class:`bot.state.base.ApprovalStore` keeps them."""
    login = bot_login.casefold()
    own = [c for c in comments if c.author.casefold() == login and not c.edited]
    found: dict[str, Approval] = {}
    for comment in own[-MAX_COMMENTS:]:
        for kind, payload in _markers(comment.body):
            if kind == "approval":
                approval = read_approval(payload, comment.url)
                if approval is not None:
                    found.pop(approval.approver, None)  # the newest last
                    found[approval.approver] = approval
            elif (approver := read_cancel(payload)) is not None:
                found.pop(approver, None)
    return tuple(found.values())
