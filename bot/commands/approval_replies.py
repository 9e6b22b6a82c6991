"""Replies to ``/approve`` and ``/approve cancel``: what was approved, with the hidden marker
that lets the approval be rebuilt from the forge when Redis has lost it (design.md 5.1)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.approvals.approval import Approval
from bot.approvals.approvers import NotYours
from bot.approvals.marker import approval_marker, cancel_marker
from bot.approvals.pending import NewObject
from bot.approvals.seen import Asked, AskedOn
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
    lines += _listed(objects)
    marker = approval_marker(approval)
    if len(marker) > MAX_MARKER_CHARS:
        lines += [
            "",
            "This approval is too large to record in this comment, so it is kept in Redis "
            "only: if Redis loses it, comment `/approve` again.",
        ]
        return "\n".join(lines)
    return "\n".join(lines) + "\n\n" + marker


def _listed(objects: Sequence[NewObject]) -> list[str]:
    lines = [
        f"- {inline_text(o.identity, 200)} in {inline_text(o.target, 100)} ({inline_path(o.path)})"
        for o in objects[:_MAX_LISTED]
    ]
    if len(objects) > _MAX_LISTED:
        lines.append(f"- … and {len(objects) - _MAX_LISTED} more")
    return lines


def not_covered(objects: Sequence[NewObject], asked: Asked) -> str:
    """The new objects an ``/approve`` does not cover: no check it could have been written
    about showed them waiting."""
    noun = "This object is" if len(objects) == 1 else f"These {len(objects)} objects are"
    return "\n".join(
        [
            f"{noun} not covered by this approval: {_why_unseen(asked)}. "
            "They wait for an `/approve` written after a check lists them.",
            "",
            *_listed(objects),
        ]
    )


def nothing_seen(head_sha: str, objects: Sequence[NewObject], asked: Asked) -> str:
    return (
        f"`/approve` changed nothing at {short_sha(head_sha)}: {_why_unseen(asked)}.\n\n"
        + not_covered(objects, asked)
    )


def _why_unseen(asked: Asked) -> str:
    if isinstance(asked, AskedOn):
        return (
            f"the check of {short_sha(asked.head_sha)}, whose button was pressed, did not list them"
        )
    return "no check the bot published before the comment was written listed them as waiting"


def no_record_of_checks(head_sha: str) -> str:
    return (
        f"`/approve` changed nothing at {short_sha(head_sha)}: the bot has no record of what its "
        "checks on this pull request showed (its memory was reset), so it cannot tell which "
        "objects the comment was written about. The check runs again now; comment `/approve` "
        "once it lists the objects."
    )


def comment_time_unknown(head_sha: str) -> str:
    return (
        f"`/approve` changed nothing at {short_sha(head_sha)}: the forge did not say when the "
        "comment was written, so the bot cannot tell which checks it was written about."
    )


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


def not_yours(actor: str, objects: Sequence[NotYours]) -> str:
    """The objects ``actor`` may not approve (a target's ``approvers``), and who may."""
    lines = [
        f"@{actor} may not approve {'this object' if len(objects) == 1 else 'these objects'}: "
        "its target names who may. They wait for an `/approve` from one of them.",
        "",
    ]
    for item in objects[:_MAX_LISTED]:
        o = item.object
        if item.owners_file is None:
            where = f"the approvers of {inline_text(o.target, 100)}"
        elif item.owners_file and item.problem:
            where = (
                f"the owners of {inline_path(o.path)} in {inline_path(item.owners_file)}, "
                f"which cannot be read ({inline_text(item.problem, 200)})"
            )
        elif item.owners_file:
            where = f"the owners of {inline_path(o.path)} in {inline_path(item.owners_file)}"
        else:
            where = "the owners in the CODEOWNERS file, which the base branch does not have"
        who = ", ".join(inline_text("@" + name, 100) for name in item.approvers[:20]) or "nobody"
        lines.append(
            f"- {inline_text(o.identity, 200)} in {inline_text(o.target, 100)}: {where}: {who}"
        )
    if len(objects) > _MAX_LISTED:
        lines.append(f"- … and {len(objects) - _MAX_LISTED} more")
    return "\n".join(lines)


def nothing_yours(head_sha: str, actor: str, objects: Sequence[NotYours]) -> str:
    return f"`/approve` changed nothing at {short_sha(head_sha)}.\n\n" + not_yours(actor, objects)
