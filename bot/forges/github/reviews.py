"""Line comments on a GitHub pull request: new findings as one review, fixed ones marked.

Every comment the bot writes ends in its finding's hidden marker
(:func:`bot.forges.base.finding_marker`), so one listing of the pull request's review comments
tells a sync what the bot said on every earlier push, without any state of its own:

- a finding no comment of the bot's carries is new. New ones, at most ``limit`` per sync (the
  rest are counted ``over_limit`` and stay in the check's text), are posted as ONE review with
  event ``COMMENT``: people get one notification, not one per line. Comments are placed by
  ``line`` and ``side`` (``position`` is closing down) on the head commit.
- GitHub refuses a whole review (422) when one of its comments is not on a line of the diff, and
  does not say which. Then each comment is posted on its own; those refused are logged and
  skipped (and tried again on the next push).
- a comment whose finding is gone is edited to begin with a "Fixed in <sha>" line; the REST API
  cannot resolve a review thread (GraphQL can; it is not used) and nothing is ever deleted.
- a finding that comes back has its marked comment edited back instead of a second comment.

Comments people wrote are never edited, whatever they quote.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from bot.errors import ForgeStatusError
from bot.forges.base import LineCommentSync, LineFinding, finding_marker, marker_fingerprint
from bot.forges.github.payloads import TEXT_LIMIT, by_a_person, clip
from bot.forges.plans import LineComment, plan_line_comments
from bot.forges.rest.send import Send

log = logging.getLogger("ichor.forge.github")

FIXED_MARK = "<!-- ichor:fixed -->"
_FIXED_ROOM = 100  # bytes kept free under TEXT_LIMIT for the "Fixed in" line


def comment_body(finding: LineFinding) -> str:
    """What the bot writes for ``finding``: its text, then its marker (never cut off)."""
    marker = f"\n\n{finding_marker(finding.fingerprint)}"
    room = TEXT_LIMIT - _FIXED_ROOM - len(marker.encode("utf-8"))
    return clip(finding.body, room) + marker


def is_fixed(body: str) -> bool:
    return body.startswith(FIXED_MARK)


def fixed_body(body: str, head_sha: str) -> str:
    """``body`` marked as fixed by ``head_sha``; the marker stays, so it is still recognised."""
    return f"{FIXED_MARK}\n✅ Fixed in {head_sha[:7]}\n\n{body}"


def review_body(label: str, count: int, over_limit: int) -> str:
    """The review's own text (GitHub requires one for a ``COMMENT`` review)."""
    text = f"**{label}**: {count} new finding{'s' if count != 1 else ''} on changed lines."
    if over_limit:
        text += f" {over_limit} more are listed in the check run."
    return text


def sync(
    send: Send,
    repo_path: str,
    number: int,
    *,
    head_sha: str,
    findings: Sequence[LineFinding],
    limit: int,
    label: str,
) -> LineCommentSync:
    """Bring the bot's review comments on pull request ``number`` in line with ``findings``.

    Requests, in order: the listing (every page); the new comments (one review, or one
    request each after a refused review); then one edit per comment to mark or un-mark.
    """
    pull = f"{repo_path}/pulls/{int(number)}"
    listed = send("GET", f"{pull}/comments?per_page=100", pages=True)
    mine: dict[int, Mapping[str, Any]] = {}
    for comment in listed if isinstance(listed, list) else []:
        if not isinstance(comment, dict) or by_a_person(comment):
            continue
        if marker_fingerprint(_body(comment)) is not None and isinstance(comment.get("id"), int):
            mine[int(comment["id"])] = comment
    plan = plan_line_comments(
        (
            LineComment(id_, str(marker_fingerprint(_body(c))), resolved=is_fixed(_body(c)))
            for id_, c in sorted(mine.items())  # oldest first: the newest is reopened
        ),
        findings,
        limit,
    )
    to_post, over_limit = plan.post, len(plan.over_limit)
    edits = {int(c.id): fixed_body(_body(mine[int(c.id)]), head_sha) for c in plan.resolve}
    wanted = {f.fingerprint: f for f in reversed(findings)}  # the first of each wins
    for c in plan.reopen:
        # Back again: its newest comment speaks for it once more.
        edits[int(c.id)] = comment_body(wanted[c.fingerprint])

    posted = 0
    if to_post:
        body = review_body(label, len(to_post), over_limit)
        posted = _post(send, pull, head_sha, to_post, body)
    for comment_id, body in sorted(edits.items()):
        send("PATCH", f"{repo_path}/pulls/comments/{comment_id}", {"body": body})
    return LineCommentSync(
        posted=posted,
        resolved=plan.resolved_findings,
        unchanged=plan.unchanged,
        over_limit=over_limit,
    )


def _post(send: Send, pull: str, head_sha: str, findings: Sequence[LineFinding], body: str) -> int:
    """Post ``findings`` as one review, else one by one; returns how many were posted."""
    comments = [
        {"path": f.path, "line": f.line, "side": "RIGHT", "body": comment_body(f)} for f in findings
    ]
    review = {"commit_id": head_sha, "event": "COMMENT", "body": body, "comments": comments}
    try:
        send("POST", f"{pull}/reviews", review)
        return len(comments)
    except ForgeStatusError as exc:
        if exc.status != 422:
            raise
        log.info("%s: the review was refused, posting its comments one by one: %s", pull, exc)
    posted = 0
    for comment in comments:
        try:
            send("POST", f"{pull}/comments", {**comment, "commit_id": head_sha})
        except ForgeStatusError as exc:
            if exc.status != 422:
                raise
            log.warning(
                "%s: no line comment on %s:%s: %s", pull, comment["path"], comment["line"], exc
            )
            continue
        posted += 1
    return posted


def _body(comment: Mapping[str, Any]) -> str:
    return str(comment.get("body") or "")
