"""Reviews on the fake GitHub: a review with line comments, single review comments and
replies, their edits, and the diff's lines a comment may be placed on."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tests.fakeforge.github.core import GitHubCore
from tests.fakeforge.github.model import (
    Ctx,
    b64,
    error,
    iso,
    not_found,
    time_now,
    validation_failed,
)
from tests.fakeforge.httpserver import Response
from tests.fakeforge.openapi import overlay_object

# GitHub's answer when a review comment is not on a line of the diff: a review refuses them all
# (``validation_failed_simple``: errors are strings), a single comment says which field.
_NOT_IN_DIFF = (
    "Pull request review thread line must be part of the diff and "
    "Pull request review thread diff hunk can't be blank"
)


class ReviewsMixin(GitHubCore):
    def set_diff_lines(
        self, full_name: str, number: int, lines: Mapping[str, Iterable[int]]
    ) -> None:
        """The lines (head side) a review comment on PR ``number`` may be placed on, by path;
        others are refused with GitHub's 422. Until this is called, any line is accepted."""
        with self._lock:
            if number not in self._pulls[full_name]:
                raise KeyError(f"{full_name}#{number} is not a pull request")
            self._diff_lines[(full_name, number)] = {
                path: frozenset(numbers) for path, numbers in lines.items()
            }

    def add_review_comment(
        self,
        full_name: str,
        number: int,
        body: str,
        *,
        path: str,
        line: int,
        user: str = "alice",
        side: str = "RIGHT",
        commit_id: str | None = None,
    ) -> dict[str, Any]:
        """A review comment by someone else, as if written on GitHub (a one-comment review)."""
        with self._lock:
            pr = self._pulls[full_name][number]
            commit = commit_id or pr["head_sha"]
            review = self._store_review(full_name, number, user, "", "COMMENTED", commit)
            spec = {"path": path, "line": line, "side": side, "body": body}
            comment = self._store_review_comment(full_name, number, spec, user, commit, review)
            return self._render_review_comment(comment)

    def reviews(self, full_name: str, number: int | None = None) -> list[dict[str, Any]]:
        """Reviews of a repository's pull requests (of PR ``number``), oldest first."""
        with self._lock:
            return [
                self._render_review(r)
                for r in self._reviews.values()
                if r["repo"] == full_name and number in (None, r["pull_number"])
            ]

    def review_comments(self, full_name: str, number: int | None = None) -> list[dict[str, Any]]:
        """Review (line) comments, pending ones included, oldest first."""
        with self._lock:
            return [
                self._render_review_comment(c)
                for c in self._review_comments.values()
                if c["repo"] == full_name and number in (None, c["pull_number"])
            ]

    def _store_review(
        self, full_name: str, number: int, user: str, body: str, state: str, commit_id: str
    ) -> dict[str, Any]:
        review: dict[str, Any] = {
            "id": self._next_id("review"),
            "repo": full_name,
            "pull_number": number,
            "user": user,
            "body": body,
            "state": state,
            "commit_id": commit_id,
            "submitted_at": None if state == "PENDING" else iso(time_now()),
        }
        self._reviews[review["id"]] = review
        return review

    def _store_review_comment(
        self,
        full_name: str,
        number: int,
        spec: Mapping[str, Any],
        user: str,
        commit_id: str,
        review: Mapping[str, Any],
        in_reply_to: int | None = None,
    ) -> dict[str, Any]:
        """``spec``: a review comment as a request gives it (path, body, line, side, ...)."""
        now = iso(time_now())
        placed = spec.get("line") is not None
        comment = {
            "id": self._next_id("review_comment"),
            "repo": full_name,
            "pull_number": number,
            "review_id": review["id"],
            "user": user,
            "body": spec["body"],
            "path": spec["path"],
            "line": spec.get("line"),
            "side": spec.get("side", "RIGHT") if placed else None,
            "start_line": spec.get("start_line"),
            "start_side": spec.get("start_side", spec.get("side", "RIGHT"))
            if spec.get("start_line") is not None
            else None,
            "position": spec.get("position"),
            "subject_type": spec.get("subject_type", "line"),
            "commit_id": commit_id,
            "in_reply_to_id": in_reply_to,
            "created_at": now,
            "updated_at": now,
        }
        self._review_comments[comment["id"]] = comment
        return comment

    def _render_review_comment(self, c: dict[str, Any]) -> dict[str, Any]:
        full, number, cid = c["repo"], c["pull_number"], c["id"]
        api = f"{self.url}/repos/{full}"
        url, html = f"{api}/pulls/comments/{cid}", f"{self.web_url}/{full}/pull/{number}"
        html += f"#discussion_r{cid}"
        line = c["line"] or c["position"] or 1
        values: dict[str, Any] = {
            "url": url,
            "pull_request_review_id": c["review_id"],
            "id": cid,
            "node_id": "PRRC_" + b64(str(cid)),
            "diff_hunk": f"@@ -{line},1 +{line},1 @@",  # not derived from the diff
            "path": c["path"],
            "commit_id": c["commit_id"],
            "original_commit_id": c["commit_id"],
            "user": self._user(c["user"]),
            "body": c["body"],
            "created_at": c["created_at"],
            "updated_at": c["updated_at"],
            "html_url": html,
            "pull_request_url": f"{api}/pulls/{number}",
            "author_association": self._association(full, c["user"]),
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "pull_request": {"href": f"{api}/pulls/{number}"},
            },
            "start_line": c["start_line"],
            "original_start_line": c["start_line"],
            "start_side": c["start_side"],
            "subject_type": c["subject_type"],
        }
        optional = {
            "line": c["line"],
            "original_line": c["line"],
            "side": c["side"],
            "position": c["position"],
            "original_position": c["position"],
            "in_reply_to_id": c["in_reply_to_id"],
        }
        values |= {k: v for k, v in optional.items() if v is not None}
        return overlay_object(self._skeleton("pull-request-review-comment"), values)

    def _render_review(self, r: dict[str, Any]) -> dict[str, Any]:
        full, number = r["repo"], r["pull_number"]
        html = f"{self.web_url}/{full}/pull/{number}#pullrequestreview-{r['id']}"
        pull_url = f"{self.url}/repos/{full}/pulls/{number}"
        values: dict[str, Any] = {
            "id": r["id"],
            "node_id": "PRR_" + b64(str(r["id"])),
            "user": self._user(r["user"]),
            "body": r["body"],
            "state": r["state"],
            "html_url": html,
            "pull_request_url": pull_url,
            "_links": {"html": {"href": html}, "pull_request": {"href": pull_url}},
            "commit_id": r["commit_id"],
            "author_association": self._association(full, r["user"]),
        }
        if r["submitted_at"] is not None:
            values["submitted_at"] = r["submitted_at"]
        return overlay_object(self._skeleton("pull-request-review"), values)

    def _pull_of(self, ctx: Ctx) -> dict[str, Any] | None:
        assert ctx.repo is not None
        return self._pulls[ctx.repo.full_name].get(int(ctx.params["pull_number"]))

    def _outside_diff(self, full_name: str, number: int, spec: Mapping[str, Any]) -> bool:
        """Whether a comment's head-side line (or range) misses the lines set_diff_lines()
        registered; without them, and for LEFT, ``position`` or file comments, it never does."""
        lines = self._diff_lines.get((full_name, number))
        if lines is None or spec.get("line") is None or spec.get("subject_type") == "file":
            return False
        if spec.get("side", "RIGHT") != "RIGHT":
            return False
        allowed = lines.get(spec["path"], frozenset())
        return spec["line"] not in allowed or spec.get("start_line", spec["line"]) not in allowed

    # ------------------------------------------------------------------ endpoints
    def _op_pulls_list_review_comments(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        pr, q = self._pull_of(ctx), ctx.req.query
        if pr is None:
            return not_found()
        since = q.get("since")
        found = [
            c
            for c in self._review_comments.values()
            if c["repo"] == ctx.repo.full_name
            and c["pull_number"] == pr["number"]
            and self._reviews[c["review_id"]]["state"] != "PENDING"
            and (since is None or c["updated_at"] >= since)
        ]
        if "sort" in q:
            key = "created_at" if q["sort"] == "created" else "updated_at"
            found.sort(key=lambda c: (c[key], c["id"]), reverse=q.get("direction") == "desc")
        items, headers = self._page(ctx.req, found)
        return Response(200, [self._render_review_comment(c) for c in items], headers)

    def _op_pulls_create_review_comment(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        full, pr, body = ctx.repo.full_name, self._pull_of(ctx), ctx.body
        if pr is None:
            return not_found()
        spec, parent_id = body, None
        if "in_reply_to" in body:  # every other field is ignored: the reply joins the thread
            parent = self._review_comments.get(int(body["in_reply_to"]))
            if parent is None or (parent["repo"], parent["pull_number"]) != (full, pr["number"]):
                return not_found()
            spec, parent_id = {**parent, "body": body["body"]}, parent["id"]
        elif self._outside_diff(full, pr["number"], body):
            return validation_failed(
                [
                    {
                        "resource": "PullRequestReviewComment",
                        "code": "custom",
                        "field": "pull_request_review_thread.line",
                        "message": "pull_request_review_thread.line must be part of the diff",
                    }
                ]
            )
        # GitHub wraps a lone comment in a review of its own.
        review = self._store_review(
            full, pr["number"], self.bot_login, "", "COMMENTED", body["commit_id"]
        )
        comment = self._store_review_comment(
            full, pr["number"], spec, self.bot_login, body["commit_id"], review, parent_id
        )
        return Response(
            201,
            self._render_review_comment(comment),
            {"location": f"{self.url}/repos/{full}/pulls/comments/{comment['id']}"},
        )

    def _op_pulls_update_review_comment(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        comment = self._review_comments.get(int(ctx.params["comment_id"]))
        if comment is None or comment["repo"] != ctx.repo.full_name:
            return not_found()
        comment["body"] = ctx.body["body"]
        comment["updated_at"] = iso(time_now())
        return Response(200, self._render_review_comment(comment))

    def _op_pulls_create_review(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        full, pr, body = ctx.repo.full_name, self._pull_of(ctx), ctx.body or {}
        if pr is None:
            return not_found()
        comments = body.get("comments", [])
        if any(self._outside_diff(full, pr["number"], c) for c in comments):
            # All or nothing, and GitHub does not say which comment it was.
            return Response(422, error("Unprocessable Entity", 422, errors=[_NOT_IN_DIFF]))
        state = {
            "APPROVE": "APPROVED",
            "REQUEST_CHANGES": "CHANGES_REQUESTED",
            "COMMENT": "COMMENTED",
        }.get(body.get("event", ""), "PENDING")
        commit = body.get("commit_id") or pr["head_sha"]
        review = self._store_review(
            full, pr["number"], self.bot_login, body.get("body", ""), state, commit
        )
        for spec in comments:
            self._store_review_comment(full, pr["number"], spec, self.bot_login, commit, review)
        return Response(200, self._render_review(review))
