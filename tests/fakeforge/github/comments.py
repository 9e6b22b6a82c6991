"""Issue comments on the fake GitHub (a pull request's conversation) and their reactions:
seeded by a test, listed, created, edited and reacted to over the API."""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from tests.fakeforge.github.core import GitHubCore
from tests.fakeforge.github.model import Ctx, b64, iso, iso_ms, not_found, time_now
from tests.fakeforge.httpserver import Response
from tests.fakeforge.openapi import overlay_object


class CommentsMixin(GitHubCore):
    def add_comment(
        self, full_name: str, issue_number: int, body: str, *, user: str = "alice"
    ) -> dict[str, Any]:
        """A comment by someone else (e.g. a ``/recheck`` command), as if posted on GitHub."""
        with self._lock:
            self._repo(full_name)
            if not self._issue_exists(full_name, issue_number):
                raise KeyError(f"{full_name}#{issue_number} is neither a pull nor an issue")
            return self._render_comment(self._store_comment(full_name, issue_number, body, user))

    def edit_comment(self, comment_id: int, body: str | None = None) -> dict[str, Any]:
        """Edit a comment as its author would on GitHub (``body`` unchanged when None): its
        ``updated_at`` moves past its ``created_at``."""
        with self._lock:
            comment = self._comments[comment_id]
            if body is not None:
                comment["body"] = body
            self._stamp_edit(comment)
            return self._render_comment(comment)

    def comments(self, full_name: str, issue_number: int | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [
                self._render_comment(c)
                for c in self._comments.values()
                if c["repo"] == full_name and issue_number in (None, c["issue_number"])
            ]

    def reactions(self) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._reactions)

    def _store_comment(self, full_name: str, number: int, body: str, user: str) -> dict[str, Any]:
        now = iso_ms(time_now())
        cid = self._next_id("comment")
        comment = {
            "id": cid,
            "repo": full_name,
            "issue_number": number,
            "body": body,
            "user": user,
            "created_at": now,
            "updated_at": now,
        }
        self._comments[cid] = comment
        return comment

    @staticmethod
    def _stamp_edit(comment: dict[str, Any]) -> None:
        # An edit within the second of the comment's creation still shows as one, as on
        # GitHub, whose whole-second stamps put an edit later than that.
        created = datetime.fromisoformat(comment["created_at"].replace("Z", "+00:00"))
        comment["updated_at"] = iso_ms(max(time_now(), created.timestamp() + 1))

    def _render_comment(self, c: dict[str, Any]) -> dict[str, Any]:
        full, number, cid = c["repo"], c["issue_number"], c["id"]
        kind = "pull" if number in self._pulls.get(full, {}) else "issues"
        is_bot = c["user"] == self.bot_login
        association = self._association(full, c["user"])
        return overlay_object(
            self._skeleton("issue-comment"),
            {
                "id": cid,
                "node_id": "IC_" + b64(str(cid)),
                "url": f"{self.url}/repos/{full}/issues/comments/{cid}",
                "html_url": f"{self.web_url}/{full}/{kind}/{number}#issuecomment-{cid}",
                "issue_url": f"{self.url}/repos/{full}/issues/{number}",
                "body": c["body"],
                "user": self._user(c["user"]),
                "created_at": c["created_at"],
                "updated_at": c["updated_at"],
                "author_association": association,
                "performed_via_github_app": self._app() if is_bot else None,
            },
        )

    # ------------------------------------------------------------------ endpoints
    def _op_issues_list_comments(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        full, number = ctx.repo.full_name, int(ctx.params["issue_number"])
        if not self._issue_exists(full, number):
            return not_found()
        since = ctx.req.query.get("since")
        found = [
            c
            for c in self._comments.values()
            if c["repo"] == full
            and c["issue_number"] == number
            and (since is None or c["updated_at"] >= since)
        ]
        items, headers = self._page(ctx.req, found)
        return Response(200, [self._render_comment(c) for c in items], headers)

    def _op_issues_create_comment(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        full, number = ctx.repo.full_name, int(ctx.params["issue_number"])
        if not self._issue_exists(full, number):
            return not_found()
        comment = self._store_comment(full, number, ctx.body["body"], self.bot_login)
        return Response(
            201,
            self._render_comment(comment),
            {"location": f"{self.url}/repos/{full}/issues/comments/{comment['id']}"},
        )

    def _op_issues_update_comment(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        comment = self._comments.get(int(ctx.params["comment_id"]))
        if comment is None or comment["repo"] != ctx.repo.full_name:
            return not_found()
        comment["body"] = ctx.body["body"]
        self._stamp_edit(comment)
        return Response(200, self._render_comment(comment))

    def _op_reactions_create_for_issue_comment(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        cid = int(ctx.params["comment_id"])
        comment = self._comments.get(cid)
        if comment is None or comment["repo"] != ctx.repo.full_name:
            return not_found()
        for existing in self._reactions:
            if existing["comment_id"] == cid and existing["content"] == ctx.body["content"]:
                return Response(200, self._render_reaction(existing))
        reaction = {
            "id": self._next_id("reaction"),
            "comment_id": cid,
            "content": ctx.body["content"],
            "user": self.bot_login,
            "created_at": iso(time_now()),
        }
        self._reactions.append(reaction)
        return Response(201, self._render_reaction(reaction))

    def _render_reaction(self, r: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": r["id"],
            "node_id": "REA_" + b64(str(r["id"])),
            "user": self._user(r["user"]),
            "content": r["content"],
            "created_at": r["created_at"],
        }
