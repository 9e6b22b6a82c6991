"""Reviews and their line comments: set-up, list, create, get, resolve and unresolve (Gitea
describes these two; Forgejo does not), and what Gitea refuses in a review that its description
cannot say."""

from __future__ import annotations

from typing import Any

from tests.fakeforge.base import Reject
from tests.fakeforge.gitea.state import Ctx, GiteaState, error, iso
from tests.fakeforge.httpserver import Response
from tests.fakeforge.openapi import Operation, Problem


class Reviews(GiteaState):
    def add_review(
        self,
        full_name: str,
        number: int,
        comments: list[tuple[str, int, str]],
        *,
        user: str = "alice",
        body: str = "",
    ) -> dict[str, Any]:
        """A COMMENT review by someone else: ``comments`` as (path, new line, body)."""
        with self._lock:
            pr = self._pull(full_name, number)
            items = [{"path": p, "new_position": n, "body": b} for p, n, b in comments]
            review = self._store_review(full_name, pr, user, "COMMENT", body, pr["head_sha"], items)
            return self._render_review(review)

    def resolve_review_comment(self, comment_id: int, *, user: str = "alice") -> None:
        """A person resolves a conversation in the web UI."""
        with self._lock:
            self._user_id(user)
            self._review_comments[comment_id]["resolver"] = user

    def reviews(self, full_name: str, number: int) -> list[dict[str, Any]]:
        """Reviews, each with its line comments under ``"comments"``."""
        with self._lock:
            return [
                {**self._render_review(r), "comments": self._review_items(r["id"])}
                for r in self._reviews.values()
                if r["repo"] == full_name and r["number"] == number
            ]

    def review_comments(self, full_name: str, number: int) -> list[dict[str, Any]]:
        return [c for r in self.reviews(full_name, number) for c in r["comments"]]

    def _store_review(
        self,
        full: str,
        pr: dict[str, Any],
        user: str,
        state: str,
        body: str,
        commit_id: str,
        items: list[dict[str, Any]],
    ) -> dict[str, Any]:
        now = iso()
        review = {
            "id": self._next_id("review"),
            "repo": full,
            "number": pr["number"],
            "user": user,
            "state": state,
            "body": body,
            "commit_id": commit_id,
            "submitted_at": now,
        }
        self._reviews[review["id"]] = review
        for item in items:
            new, old = item.get("new_position") or 0, item.get("old_position") or 0
            comment = {
                "id": self._next_id("comment"),  # review comments are comments in Gitea
                "review_id": review["id"],
                "repo": full,
                "number": pr["number"],
                "user": user,
                "path": item["path"],
                "line": new if new > 0 else -old,
                "body": item.get("body") or "",
                "commit_id": commit_id,
                "resolver": None,
                "created_at": now,
            }
            self._review_comments[comment["id"]] = comment
        return review

    def _review_items(self, review_id: int) -> list[dict[str, Any]]:
        return [
            self._render_review_comment(c)
            for c in self._review_comments.values()
            if c["review_id"] == review_id
        ]

    def _render_review(self, r: dict[str, Any]) -> dict[str, Any]:
        pr = self._pulls[r["repo"]][r["number"]]
        web = f"{self.url}/{r['repo']}/pulls/{r['number']}"
        count = sum(1 for c in self._review_comments.values() if c["review_id"] == r["id"])
        return {
            "id": r["id"],
            "user": self._render_user(r["user"]),
            "body": r["body"],
            "commit_id": r["commit_id"],
            "state": r["state"],
            "stale": r["commit_id"] != pr["head_sha"],
            "official": False,
            "dismissed": False,
            "comments_count": count,
            "submitted_at": r["submitted_at"],
            "updated_at": r["submitted_at"],
            "html_url": f"{web}#issuecomment-{r['id']}",
            "pull_request_url": web,
        }

    def _render_review_comment(self, c: dict[str, Any]) -> dict[str, Any]:
        web = f"{self.url}/{c['repo']}/pulls/{c['number']}"
        out = {
            "id": c["id"],
            "body": c["body"],
            "user": self._render_user(c["user"]),
            "pull_request_review_id": c["review_id"],
            "path": c["path"],
            "commit_id": c["commit_id"],
            "original_commit_id": c["commit_id"],
            "diff_hunk": "",
            "position": max(0, c["line"]),
            "original_position": max(0, -c["line"]),
            "html_url": f"{web}/files#issuecomment-{c['id']}",
            "pull_request_url": web,
            "created_at": c["created_at"],
            "updated_at": c["created_at"],
        }
        if c["resolver"] is not None:  # Gitea sends null; the description has no nullable
            out["resolver"] = self._render_user(c["resolver"])
        return out

    def _op_repoListPullReviews(self, ctx: Ctx) -> Response:
        pr = self._ctx_pull(ctx)
        assert ctx.repo is not None
        found = [
            r
            for r in self._reviews.values()
            if (r["repo"], r["number"]) == (ctx.repo.full_name, pr["number"])
            and (r["state"] != "PENDING" or r["user"] == self.bot_login)
        ]
        items, headers = self._page(ctx.req, found)
        return Response(200, [self._render_review(r) for r in items], headers)

    def _op_repoCreatePullReview(self, ctx: Ctx) -> Response:
        pr = self._ctx_pull(ctx)
        assert ctx.repo is not None
        body = ctx.body or {}
        event = body.get("event")
        # Gitea: any event but these three leaves the review PENDING (invisible to others).
        state = event if event in ("APPROVED", "REQUEST_CHANGES", "COMMENT") else "PENDING"
        review = self._store_review(
            ctx.repo.full_name,
            pr,
            self.bot_login,
            state,
            str(body.get("body") or ""),
            str(body.get("commit_id") or pr["head_sha"]),
            list(body.get("comments") or []),
        )
        return Response(200, self._render_review(review))

    def _ctx_review(self, ctx: Ctx) -> dict[str, Any]:
        pr = self._ctx_pull(ctx)
        review = self._reviews.get(int(ctx.params["id"]))
        if (
            review is None
            or review["number"] != pr["number"]
            or ctx.repo is None
            or review["repo"] != ctx.repo.full_name
        ):
            raise Reject(error(404, "review does not exist"))
        return review

    def _op_repoGetPullReview(self, ctx: Ctx) -> Response:
        return Response(200, self._render_review(self._ctx_review(ctx)))

    def _op_repoGetPullReviewComments(self, ctx: Ctx) -> Response:
        return Response(200, self._review_items(self._ctx_review(ctx)["id"]))

    def _mark(self, ctx: Ctx, resolver: str | None) -> Response:
        """Gitea's (un)resolve: the PR's poster or a writer of the repository may."""
        assert ctx.repo is not None
        comment = self._review_comments.get(int(ctx.params["id"]))
        if comment is None or comment["repo"] != ctx.repo.full_name:
            raise Reject(error(404, "comment does not exist"))
        pr = self._pulls[comment["repo"]][comment["number"]]
        if pr["user"] != self.bot_login and ctx.repo.roles.get(self.bot_login) not in (
            "owner",
            "admin",
            "write",
        ):
            raise Reject(error(403, "user should have permission to resolve comment"))
        comment["resolver"] = resolver
        return Response(204)

    def _op_repoResolvePullReviewComment(self, ctx: Ctx) -> Response:
        return self._mark(ctx, self.bot_login)

    def _op_repoUnresolvePullReviewComment(self, ctx: Ctx) -> Response:
        return self._mark(ctx, None)

    def _documented_rules(self, op: Operation, body: Any) -> list[Problem]:
        problems = super()._documented_rules(op, body)
        if not isinstance(body, dict) or op.operation_id != "repoCreatePullReview":
            return problems
        comments = body.get("comments") or []
        if (
            body.get("event") == "COMMENT"
            and not str(body.get("body") or "").strip()
            and not comments
        ):
            problems.append(
                Problem("body", "invalid", "review event COMMENT requires a body or a comment")
            )
        for i, c in enumerate(comments):
            where = f"comments.{i}"
            if not c.get("path"):
                problems.append(Problem(f"{where}.path", "missing_field", f"{where}: no path"))
            if (c.get("new_position") or 0) <= 0 and (c.get("old_position") or 0) <= 0:
                problems.append(
                    Problem(
                        where,
                        "invalid",
                        f"{where}: new_position or old_position must be a line (> 0)",
                    )
                )
            if not str(c.get("body") or "").strip():
                problems.append(Problem(f"{where}.body", "missing_field", f"{where}: empty body"))
        return problems
