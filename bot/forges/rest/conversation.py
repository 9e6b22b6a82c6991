"""A pull request's conversation: the one summary comment kept in place, new comments (replies
to commands), the listing approvals are read back from, and reactions.

Which comments are the bot's differs by forge (GitHub types an app's author ``Bot``; Gitea marks
no account, so only the token's own user counts), so the caller says: ``ours`` for the comments
the bot may edit or find again, ``bot`` for the comments listed as a bot's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bot.errors import PermanentForgeError
from bot.forges import responses
from bot.forges.base import ForgeComment, Reaction
from bot.forges.plans import PostedComment, SummaryAction, plan_summary, summary_body
from bot.forges.rest.send import Dialect, Send

Author = Callable[[Mapping[str, Any]], bool]


def comments_path(repo_path: str, number: int) -> str:
    return f"{repo_path}/issues/{int(number)}/comments"


def html_url(item: Any) -> str | None:
    """A comment's (or any object's) web address, when the answer has one."""
    url = item.get("html_url") if isinstance(item, dict) else None
    return str(url) if url else None


def comments(send: Send, repo_path: str, number: int, dialect: Dialect) -> list[dict[str, Any]]:
    """Every comment on pull request ``number``, oldest first, every page."""
    where = f"{dialect.forge} GET {comments_path(repo_path, number)}"
    listed = send("GET", comments_path(repo_path, number), pages=True)
    found = [c for c in listed if isinstance(c, dict)] if isinstance(listed, list) else []
    return sorted(found, key=lambda c: int(responses.field(c, "id", where)))


def upsert_summary(
    send: Send, repo_path: str, number: int, body: str, *, dialect: Dialect, ours: Author
) -> str | None:
    """Create the summary comment, or edit it in place; its URL."""
    body = dialect.clip_body(summary_body(body))
    found = comments(send, repo_path, number, dialect)
    plan = plan_summary(
        (PostedComment(i, str(c.get("body") or ""), ours(c)) for i, c in enumerate(found)), body
    )
    if plan.existing is None:
        return html_url(send("POST", comments_path(repo_path, number), {"body": body}))
    mine = found[int(plan.existing.id)]
    if plan.action is SummaryAction.KEEP:
        return html_url(mine)
    edited = send("PATCH", f"{repo_path}/issues/comments/{int(mine['id'])}", {"body": body})
    return html_url(edited) or html_url(mine)


def post(
    send: Send,
    repo_path: str,
    number: int,
    body: str,
    *,
    dialect: Dialect,
    ours: Author,
    again: bool,
) -> str | None:
    """A new comment on pull request ``number`` (never an edit); its URL.

    ``again`` is a retry: the last attempt's answer may have been lost after the comment
    landed. The comment replied to is older than the reply, so only a reply that landed can be
    the newest comment; when it is, it is not posted twice.
    """
    body = dialect.clip_body(body)
    if again:
        found = comments(send, repo_path, number, dialect)
        if found and ours(found[-1]) and found[-1].get("body") == body:
            return html_url(found[-1])
    return html_url(send("POST", comments_path(repo_path, number), {"body": body}))


def listing(
    send: Send, repo_path: str, number: int, *, dialect: Dialect, bot: Author
) -> list[ForgeComment]:
    where = f"{dialect.forge} GET {comments_path(repo_path, number)}"
    return [
        responses.comment(c, where, author_is_bot=bot(c))
        for c in comments(send, repo_path, number, dialect)
    ]


def react(
    send: Send, repo_path: str, comment_id: str, reaction: Reaction, dialect: Dialect
) -> None:
    """``reaction`` on the issue comment ``comment_id`` (named by its id alone: the pull request
    is not in the path). 201 is a new reaction, 200 one given before (a job run again): both
    are done."""
    if not comment_id.isdigit():
        raise PermanentForgeError(f"{dialect.forge}: {comment_id!r} is not an issue comment id")
    send("POST", f"{repo_path}/issues/comments/{comment_id}/reactions", {"content": reaction})
