"""Replies to ``/approve`` and ``/approve cancel``: what was approved, with the hidden marker
that lets the approval be rebuilt from the forge when Redis has lost it (DESIGN 5.1)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.approvals.marker import approval_marker, cancel_marker
from bot.approvals.model import Approval
from bot.approvals.pending import NewObject
from bot.checks.markdown_text import inline_path, inline_text, short_sha

# A marker above this size would push the reply past what GitHub takes (65,536 characters):
# then the approval is kept in Redis only, and the reply says so.
MAX_MARKER_CHARS = 50_000
_MAX_LISTED = 50


def approved(approval: Approval, objects: Sequence[NewObject]) -> str:
    count = len(objects)
    noun = "1 new object" if count == 1 else f"{count} new objects"
    lines = [
        f"@{approval.approver} approved {noun} of strict targets, exactly as they are at "
        f"{short_sha(approval.head_sha)}. A later push keeps this approval for every object it "
        "does not change; an added or changed object waits for a new `/approve`.",
        "",
    ]
    lines += [
        f"- {inline_text(o.identity, 200)} in {inline_text(o.target, 100)} ({inline_path(o.path)})"
        for o in objects[:_MAX_LISTED]
    ]
    if count > _MAX_LISTED:
        lines.append(f"- … and {count - _MAX_LISTED} more")
    marker = approval_marker(approval)
    if len(marker) > MAX_MARKER_CHARS:
        lines += [
            "",
            "This approval is too large to record in this comment, so it is kept in Redis "
            "only: if Redis loses it, comment `/approve` again.",
        ]
        return "\n".join(lines)
    return "\n".join(lines) + "\n\n" + marker


def nothing_to_approve(head_sha: str) -> str:
    return (
        f"`/approve` changed nothing: no new object of a strict target waits at "
        f"{short_sha(head_sha)}."
    )


def withdrawn(approver: str, source: str) -> str:
    return (
        f"@{approver} withdrew their approval; the new objects it covered wait for `/approve` "
        "again.\n\n" + cancel_marker(approver, source)
    )


def nothing_to_withdraw(actor: str) -> str:
    return f"`/approve cancel` changed nothing: @{actor} has no approval on this pull request."
