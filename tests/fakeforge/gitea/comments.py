"""Issue comments on a pull request and reactions to them: set-up, list, create, get, edit,
react; what was reacted is kept for assertions (:meth:`Comments.reactions`).

Gitea 1.27 and Forgejo 16 list an issue's comments in one answer: the endpoint takes no
``limit``/``page`` (they are ignored) and sends ``X-Total-Count``. :meth:`Comments.page_comments`
pages it like Gitea's paged listings instead, for a client's paging to be exercised.

Timestamps have whole seconds, as Gitea's: an edit is stamped at least a second after the
comment's creation, so ``updated_at != created_at`` tells every edited comment.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from tests.fakeforge.base import Reject
from tests.fakeforge.gitea.state import Ctx, GiteaState, error, iso, iso_ms
from tests.fakeforge.httpserver import Response

# Gitea's default [ui] REACTIONS; any other content is a 403.
REACTIONS = ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes")


class Comments(GiteaState):
    """Issue comments and their reactions."""

    def add_comment(
        self, full_name: str, number: int, body: str, *, user: str = "alice"
    ) -> dict[str, Any]:
        """An issue comment by someone else, as if posted on Gitea."""
        with self._lock:
            self._pull(full_name, number)
            return self._render_comment(self._store_comment(full_name, number, body, user))

    def edit_comment(self, comment_id: int, body: str) -> dict[str, Any]:
        """Its author edits an issue comment in the web UI."""
        with self._lock:
            comment = self._comments[comment_id]
            comment["body"], comment["updated_at"] = body, _edited_at(comment)
            return self._render_comment(comment)

    def page_comments(self, limit: int | None) -> None:
        """List issue comments ``limit`` a page at most (None: all at once, as Gitea does)."""
        with self._lock:
            self._comment_page = limit

    def comments(self, full_name: str, number: int) -> list[dict[str, Any]]:
        with self._lock:
            return [
                self._render_comment(c)
                for c in self._comments.values()
                if c["repo"] == full_name and c["number"] == number
            ]

    def reactions(self, full_name: str, comment_id: int) -> list[dict[str, Any]]:
        """Reactions to a comment, oldest first: ``{"content", "user"}`` (the login)."""
        with self._lock:
            return [
                {"content": r["content"], "user": r["user"]}
                for r in self._reactions
                if (r["repo"], r["comment_id"]) == (full_name, comment_id)
            ]

    def _store_comment(self, full: str, number: int, body: str, user: str) -> dict[str, Any]:
        now, comment_id = iso_ms(), self._next_id("comment")
        comment: dict[str, Any] = {
            "id": comment_id,
            "repo": full,
            "number": number,
            "user": user,
            "body": body,
            "created_at": now,
            "updated_at": now,
        }
        self._comments[comment_id] = comment
        return comment

    def _render_comment(self, c: dict[str, Any]) -> dict[str, Any]:
        web = f"{self.url}/{c['repo']}/pulls/{c['number']}"
        return {
            "id": c["id"],
            "html_url": f"{web}#issuecomment-{c['id']}",
            "pull_request_url": web,
            "issue_url": "",
            "user": self._render_user(c["user"]),
            "original_author": "",
            "original_author_id": 0,
            "body": c["body"],
            "assets": [],
            "created_at": c["created_at"],
            "updated_at": c["updated_at"],
        }

    def _op_issueGetComments(self, ctx: Ctx) -> Response:
        pr = self._ctx_pull(ctx)
        assert ctx.repo is not None
        found = [
            self._render_comment(c)
            for c in self._comments.values()
            if c["repo"] == ctx.repo.full_name and c["number"] == pr["number"]
        ]
        if self._comment_page is None:  # Gitea: every comment at once, limit/page ignored
            return Response(200, found, {"x-total-count": str(len(found))})
        items, headers = self._page(ctx.req, found, cap=self._comment_page)
        return Response(200, items, headers)

    def _op_issueCreateComment(self, ctx: Ctx) -> Response:
        pr = self._ctx_pull(ctx)
        assert ctx.repo is not None
        comment = self._store_comment(
            ctx.repo.full_name, pr["number"], ctx.body["body"], self.bot_login
        )
        return Response(201, self._render_comment(comment))

    def _existing_comment(self, ctx: Ctx) -> dict[str, Any]:
        assert ctx.repo is not None
        comment = self._comments.get(int(ctx.params["id"]))
        if comment is None or comment["repo"] != ctx.repo.full_name:
            raise Reject(error(404, "comment does not exist"))
        return comment

    def _op_issueGetComment(self, ctx: Ctx) -> Response:
        return Response(200, self._render_comment(self._existing_comment(ctx)))

    def _op_issueEditComment(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        comment = self._existing_comment(ctx)
        if comment["user"] != self.bot_login and ctx.repo.roles.get(self.bot_login) not in (
            "admin",
            "owner",
        ):
            raise Reject(error(403, "user should be the poster or an admin"))
        comment["body"], comment["updated_at"] = ctx.body["body"], _edited_at(comment)
        return Response(200, self._render_comment(comment))

    def _op_issuePostCommentReaction(self, ctx: Ctx) -> Response:
        """Gitea: 201 for a new reaction, 200 for one this user already gave."""
        assert ctx.repo is not None
        comment_id = int(ctx.params["id"])
        comment = self._comments.get(comment_id) or self._review_comments.get(comment_id)
        if comment is None or comment["repo"] != ctx.repo.full_name:
            raise Reject(error(404, "comment does not exist"))
        content = str((ctx.body or {}).get("content") or "")
        if content not in REACTIONS:
            raise Reject(error(403, f"'{content}' is not an allowed reaction"))
        key = (ctx.repo.full_name, comment_id, self.bot_login, content)
        found = next((r for r in self._reactions if _key(r) == key), None)
        status = 200 if found is not None else 201
        if found is None:
            found = dict(zip(("repo", "comment_id", "user", "content"), key, strict=True))
            found["created_at"] = iso()
            self._reactions.append(found)
        body = {
            "content": content,
            "created_at": found["created_at"],
            "user": self._render_user(self.bot_login),
        }
        return Response(status, body)


def _key(reaction: dict[str, Any]) -> tuple[Any, ...]:
    return (reaction["repo"], reaction["comment_id"], reaction["user"], reaction["content"])


def _edited_at(comment: dict[str, Any]) -> str:
    """Now, or a second after the creation if that is later (Gitea's stamps have whole
    seconds, so there an edit always reads as later)."""
    created = datetime.fromisoformat(comment["created_at"].replace("Z", "+00:00"))
    return iso_ms(max(time.time(), created.timestamp() + 1))
