"""A GitHub pull request's conversation: the one summary comment kept in place, new comments
(replies to commands), the listing approvals are read back from, and reactions; and the login
the bot comments under.

Each call takes ``send`` (one request with the current installation token,
:class:`bot.forges.github.reviews.Send`) and the repository's API path, so the adapter keeps
the tokens, retries and locks and this module only what is said to GitHub.
"""

from __future__ import annotations

from typing import Any

from bot.errors import PermanentForgeError
from bot.forges import responses
from bot.forges.base import ForgeComment, Reaction
from bot.forges.github.payloads import by_a_person, clip, field, html_url
from bot.forges.github.reviews import Send
from bot.forges.plans import PostedComment, SummaryAction, plan_summary, summary_body

PAGE_SIZE = 100  # the most GitHub lists per page


def comments_path(repo_path: str, number: int) -> str:
    return f"{repo_path}/issues/{int(number)}/comments"


def app_login(app: Any) -> str:
    """The login an app comments under, from ``GET /app``: its slug and ``[bot]``."""
    return f"{field(app, 'slug', 'GET /app')}[bot]"


def upsert_summary(send: Send, repo_path: str, number: int, body: str) -> str | None:
    """Create the summary comment, or edit it in place; its URL."""
    body = clip(summary_body(body))
    comments = comments_path(repo_path, number)
    listed = send("GET", f"{comments}?per_page={PAGE_SIZE}", pages=True)
    by_id = {i: c for i, c in enumerate(listed) if isinstance(c, dict)}
    plan = plan_summary(
        (PostedComment(i, str(c.get("body") or ""), not by_a_person(c)) for i, c in by_id.items()),
        body,
    )
    if plan.existing is None:
        return html_url(send("POST", comments, {"body": body}))
    mine = by_id[int(plan.existing.id)]
    if plan.action is SummaryAction.KEEP:
        return html_url(mine)
    comment_id = int(field(mine, "id", f"GET {comments}"))
    edited = send("PATCH", f"{repo_path}/issues/comments/{comment_id}", {"body": body})
    return html_url(edited) or html_url(mine)


def post(send: Send, repo_path: str, number: int, body: str) -> str | None:
    """A new comment on pull request ``number`` (never an edit); its URL."""
    return html_url(send("POST", comments_path(repo_path, number), {"body": clip(body)}))


def listing(send: Send, repo_path: str, number: int) -> list[ForgeComment]:
    """Every comment on pull request ``number``, oldest first (GitHub lists them so), every
    page. A comment is a bot's when GitHub types its author ``Bot`` (apps and their kin)."""
    comments = comments_path(repo_path, number)
    where = f"GitHub GET {comments}"
    listed = send("GET", f"{comments}?per_page={PAGE_SIZE}", pages=True)
    return [
        responses.comment(c, where, author_is_bot=responses.user_of(c).get("type") == "Bot")
        for c in listed
    ]


def react(send: Send, repo_path: str, comment_id: str, reaction: Reaction) -> None:
    """``reaction`` on the issue comment ``comment_id``; GitHub answers 200 when the app has
    reacted so already, which is as good."""
    if not comment_id.isdigit():
        raise PermanentForgeError(f"GitHub: {comment_id!r} is not an issue comment id")
    path = f"{repo_path}/issues/comments/{comment_id}/reactions"
    send("POST", path, {"content": reaction})
