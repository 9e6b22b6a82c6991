"""Issue comments on a pull request: set-up, list, create, get, edit."""

from __future__ import annotations

from typing import Any

from tests.fakeforge.base import Reject
from tests.fakeforge.gitea.state import Ctx, GiteaState, error, iso
from tests.fakeforge.httpserver import Response


class Comments(GiteaState):
    def add_comment(
        self, full_name: str, number: int, body: str, *, user: str = "alice"
    ) -> dict[str, Any]:
        """An issue comment by someone else, as if posted on Gitea."""
        with self._lock:
            self._pull(full_name, number)
            return self._render_comment(self._store_comment(full_name, number, body, user))

    def comments(self, full_name: str, number: int) -> list[dict[str, Any]]:
        with self._lock:
            return [
                self._render_comment(c)
                for c in self._comments.values()
                if c["repo"] == full_name and c["number"] == number
            ]

    def _store_comment(self, full: str, number: int, body: str, user: str) -> dict[str, Any]:
        now, comment_id = iso(), self._next_id("comment")
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
        return Response(200, found)  # Gitea answers every comment at once: no paging

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
        comment["body"], comment["updated_at"] = ctx.body["body"], iso()
        return Response(200, self._render_comment(comment))
