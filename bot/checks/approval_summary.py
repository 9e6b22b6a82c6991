"""The approvals part of what the forge shows (design.md 5.1): the headline when new objects of
strict targets wait for ``/approve``, and the summary's list of each new object with who
approved it and at which commit. Pure; every name goes through :mod:`bot.checks.markdown_text`.
"""

from __future__ import annotations

from bot.approvals.pending import ApprovalStatus, NewObject
from bot.checks.markdown_text import (
    MAX_PATH_SHOWN,
    escape,
    inline_path,
    inline_text,
    printable,
    short_sha,
    shorten,
)

# The list is clipped on its own, so that a pull request adding thousands of objects leaves
# room for the issues (the check summary and the comment hold about 60,000 characters).
MAX_APPROVALS_CHARS = 20_000


def waiting_title(status: ApprovalStatus, *, merge_group: bool = False) -> str:
    """``2 new objects in prod wait for /approve``: the headline GitLab and Gitea show. In a
    merge group, which nobody approves: ``2 new objects in prod not approved on their pull
    requests``."""
    count = len(status.waiting)
    objects = "1 new object" if count == 1 else f"{count} new objects"
    where = ", ".join(status.waiting_targets)
    if merge_group:
        return f"{objects} in {where} not approved on their pull requests"
    verb = "waits" if count == 1 else "wait"
    return f"{objects} in {where} {verb} for /approve"


def _identity(text: str) -> str:
    shown = shorten(printable(text), MAX_PATH_SHOWN, middle=True)
    return f"<code>{escape(shown, code=True)}</code>"


def approvals_section(status: ApprovalStatus | None, *, merge_group: bool = False) -> list[str]:
    """Each new object of a strict target, waiting first, as table rows within
    :data:`MAX_APPROVALS_CHARS`; the rest are counted. In a merge group the approvals are
    those given on its pull requests, and an object without one is not approved."""
    if status is None or not status.objects:
        return []
    lines = ["", "### Approvals", ""]
    if status.waiting and merge_group:
        lines += [
            "New objects in strict targets need approval, and nobody can approve a merge "
            "group: the objects below are not approved, as they are here, on any of its pull "
            "requests. Approve them there (`/approve` on the pull request), then queue it "
            "again.",
            "",
        ]
    elif status.waiting:
        lines += [
            "New objects in strict targets need approval: someone with the permission "
            "comments `/approve` on this pull request, which approves exactly these objects "
            "as they are at this commit.",
            "",
        ]
    else:
        lines += ["Every new object in a strict target is approved.", ""]
    lines += ["| Target | Object | Path | Approval |", "| --- | --- | --- | --- |"]
    pending = "❌ not approved" if merge_group else "⏳ waiting for `/approve`"
    outdated = {id(o): a for o, a in status.outdated}

    def waiting_state(obj: NewObject) -> str:
        earlier = outdated.get(id(obj))
        if earlier is None:
            return pending
        who = inline_text("@" + earlier.approver, 100)
        return (
            f"{pending}; the approval by {who} at {short_sha(earlier.head_sha)} was of an "
            "earlier version (the object changed since)"
        )

    rows = [(o, waiting_state(o)) for o in status.waiting]
    rows += [
        (o, f"✅ approved by {inline_text('@' + a.approver, 100)} at {short_sha(a.head_sha)}")
        for o, a in status.approved
    ]
    size, shown = 0, 0
    for obj, state in rows:
        row = f"| {inline_text(obj.target, 100)} | {_identity(obj.identity)} | "
        row += f"{inline_path(obj.path)} | {state} |"
        if size + len(row) + 1 > MAX_APPROVALS_CHARS:
            break
        lines.append(row)
        size += len(row) + 1
        shown += 1
    left = len(rows) - shown
    if left:
        waiting = max(len(status.waiting) - shown, 0)
        lines += ["", f"… and {left} more new objects ({waiting} of them waiting), not listed."]
    return lines
