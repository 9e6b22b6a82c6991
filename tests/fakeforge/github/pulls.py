"""Pull requests on the fake GitHub: registered and updated by a test, listed, read, opened
(with GitHub's 422 for a duplicate) and updated over the API, and found by commit."""

from __future__ import annotations

from typing import Any

from tests.fakeforge.github.core import GitHubCore
from tests.fakeforge.github.model import (
    ZERO_SHA,
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


class PullsMixin(GitHubCore):
    def add_pull(
        self,
        full_name: str,
        number: int | None = None,
        *,
        head_sha: str,
        base_ref: str = "main",
        head_ref: str = "feature",
        base_sha: str | None = None,
        head_repo: str | None = None,
        state: str = "open",
        title: str = "A change",
        body: str | None = "",
        user: str = "octocat",
        draft: bool = False,
    ) -> dict[str, Any]:
        """Register a pull request; ``head_repo`` names a fork (default: the base repo)."""
        with self._lock:
            self._repo(full_name)
            if number is None:
                number = self._next_number(full_name)
            if number in self._issues[full_name]:
                raise ValueError(f"#{number} is an issue of {full_name}")
            now = iso(time_now())
            self._pulls[full_name][number] = {
                "number": number,
                "id": self._next_id("pull"),
                "state": state,
                "title": title,
                "body": body,
                "user": user,
                "draft": draft,
                "head_ref": head_ref,
                "head_sha": head_sha,
                "head_repo": head_repo or full_name,
                "base_ref": base_ref,
                "base_sha": base_sha or self._branch_sha(full_name, base_ref) or ZERO_SHA,
                "created_at": now,
                "updated_at": now,
                "closed_at": None if state == "open" else now,
                "merged_at": None,
            }
            return self._render_pull(full_name, number)

    def update_pull(self, full_name: str, number: int, **changes: Any) -> dict[str, Any]:
        """Change a registered PR (``head_sha=...``, ``state="closed"``, ``base_ref=...``;
        merged: ``state="closed", merged_at=iso(...)``)."""
        with self._lock:
            pr = self._pulls[full_name][number]
            unknown = set(changes) - set(pr)
            if unknown:
                raise TypeError(f"unknown pull fields: {sorted(unknown)}")
            pr.update(changes)
            pr["updated_at"] = iso(time_now())
            if "state" in changes:
                pr["closed_at"] = None if changes["state"] == "open" else pr["updated_at"]
            return self._render_pull(full_name, number)

    def add_issue(
        self, full_name: str, number: int | None = None, *, title: str = "An issue"
    ) -> int:
        with self._lock:
            self._repo(full_name)
            if number is None:
                number = self._next_number(full_name)
            self._issues[full_name][number] = {"number": number, "title": title}
            return number

    def pulls(self, full_name: str) -> list[dict[str, Any]]:
        with self._lock:
            return [self._render_pull(full_name, n) for n in sorted(self._pulls[full_name])]

    def _render_pull(
        self, full_name: str, number: int, component: str = "pull-request"
    ) -> dict[str, Any]:
        pr = self._pulls[full_name][number]
        api = f"{self.url}/repos/{full_name}"
        head_owner = pr["head_repo"].split("/", 1)[0]

        def side(ref: str, sha: str, repo_full: str) -> dict[str, Any]:
            owner = repo_full.split("/", 1)[0]
            return {
                "label": f"{owner}:{ref}",
                "ref": ref,
                "sha": sha,
                "user": self._user(owner),
                "repo": self._repo_object(repo_full),
            }

        values = {
            "url": f"{api}/pulls/{number}",
            "id": pr["id"],
            "node_id": "PR_" + b64(f"{full_name}#{number}"),
            "html_url": f"{self.web_url}/{full_name}/pull/{number}",
            "diff_url": f"{self.web_url}/{full_name}/pull/{number}.diff",
            "patch_url": f"{self.web_url}/{full_name}/pull/{number}.patch",
            "issue_url": f"{api}/issues/{number}",
            "commits_url": f"{api}/pulls/{number}/commits",
            "review_comments_url": f"{api}/pulls/{number}/comments",
            "review_comment_url": f"{api}/pulls/comments{{/number}}",
            "comments_url": f"{api}/issues/{number}/comments",
            "statuses_url": f"{api}/statuses/{pr['head_sha']}",
            "number": number,
            "state": pr["state"],
            "locked": False,
            "title": pr["title"],
            "body": pr["body"],
            "user": self._user(pr["user"]),
            "created_at": pr["created_at"],
            "updated_at": pr["updated_at"],
            "closed_at": pr["closed_at"],
            "merged_at": pr["merged_at"],
            "head": side(pr["head_ref"], pr["head_sha"], pr["head_repo"]),
            "base": side(pr["base_ref"], pr["base_sha"], full_name),
            "draft": pr["draft"],
            "author_association": "CONTRIBUTOR"
            if head_owner != full_name.split("/")[0]
            else "MEMBER",
        }
        if component == "pull-request":
            values.update(
                {
                    "merged": pr["merged_at"] is not None,
                    "mergeable": None,
                    "mergeable_state": "unknown",
                    "maintainer_can_modify": False,
                }
            )
        return overlay_object(self._skeleton(component), values)

    # ------------------------------------------------------------------ endpoints
    def _op_pulls_list(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        full, q = ctx.repo.full_name, ctx.req.query
        state = q.get("state", "open")
        head = q.get("head")
        found = []
        for n, pr in self._pulls[full].items():
            if state != "all" and pr["state"] != state:
                continue
            if "base" in q and pr["base_ref"] != q["base"]:
                continue
            # GitHub ignores a head filter without the "owner:" prefix (it returns everything).
            if head and ":" in head:
                owner, _, ref = head.partition(":")
                if (pr["head_repo"].split("/", 1)[0], pr["head_ref"]) != (owner, ref):
                    continue
            found.append(n)
        found.sort(reverse=q.get("direction", "desc") == "desc")
        items, headers = self._page(ctx.req, found)
        return Response(
            200, [self._render_pull(full, n, "pull-request-simple") for n in items], headers
        )

    def _op_pulls_get(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        number = int(ctx.params["pull_number"])
        if number not in self._pulls[ctx.repo.full_name]:
            return not_found()
        return Response(200, self._render_pull(ctx.repo.full_name, number))

    def _op_pulls_update(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        full, number = ctx.repo.full_name, int(ctx.params["pull_number"])
        pr = self._pulls[full].get(number)
        if pr is None:
            return not_found()
        body = ctx.body or {}
        for key in ("title", "body", "state"):
            if key in body:
                pr[key] = body[key]
        if "base" in body:
            pr["base_ref"] = body["base"]
        pr["updated_at"] = iso(time_now())
        pr["closed_at"] = None if pr["state"] == "open" else pr["updated_at"]
        return Response(200, self._render_pull(full, number))

    def _op_pulls_create(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        full = ctx.repo.full_name
        body = ctx.body
        head = body["head"]
        head_owner, sep, head_ref = head.partition(":")
        if not sep:
            head_owner, head_ref = ctx.repo.owner, head
        head_repo = body.get("head_repo") or f"{head_owner}/{ctx.repo.name}"
        label = f"{head_owner}:{head_ref}"
        for pr in self._pulls[full].values():
            if pr["state"] == "open" and (
                pr["head_repo"].split("/")[0],
                pr["head_ref"],
                pr["base_ref"],
            ) == (
                head_owner,
                head_ref,
                body["base"],
            ):
                return validation_failed(
                    [
                        {
                            "resource": "PullRequest",
                            "code": "custom",
                            "message": f"A pull request already exists for {label}.",
                        }
                    ]
                )
        head_sha = self._branch_sha(head_repo, head_ref)
        base_sha = self._branch_sha(full, body["base"])
        for name, sha in (("head", head_sha), ("base", base_sha)):
            if sha == "":  # the bare repository exists and has no such branch
                return validation_failed(
                    [{"resource": "PullRequest", "field": name, "code": "invalid"}]
                )
        if head_sha and base_sha and head_sha == base_sha:
            return validation_failed(
                [
                    {
                        "resource": "PullRequest",
                        "code": "custom",
                        "message": f"No commits between {body['base']} and {head_ref}",
                    }
                ]
            )
        if "issue" in body:
            return Response(501, error("the fake does not convert issues to pull requests"))
        number = self._next_number(full)
        now = iso(time_now())
        self._pulls[full][number] = {
            "number": number,
            "id": self._next_id("pull"),
            "state": "open",
            "title": body.get("title", head_ref),
            "body": body.get("body"),
            "user": self.bot_login,
            "draft": body.get("draft", False),
            "head_ref": head_ref,
            "head_sha": head_sha or ZERO_SHA,
            "head_repo": head_repo,
            "base_ref": body["base"],
            "base_sha": base_sha or ZERO_SHA,
            "created_at": now,
            "updated_at": now,
            "closed_at": None,
            "merged_at": None,
        }
        return Response(
            201,
            self._render_pull(full, number),
            {"location": f"{self.url}/repos/{full}/pulls/{number}"},
        )

    def _op_repos_list_pull_requests_associated_with_commit(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        full, sha = ctx.repo.full_name, ctx.params["commit_sha"]
        found = sorted(
            (n for n, pr in self._pulls[full].items() if pr["head_sha"] == sha), reverse=True
        )
        items, headers = self._page(ctx.req, found)
        return Response(
            200, [self._render_pull(full, n, "pull-request-simple") for n in items], headers
        )
