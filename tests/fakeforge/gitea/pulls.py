"""Pull requests: set-up, rendering, and get, list, by base and head, create, edit."""

from __future__ import annotations

from typing import Any

from tests.fakeforge.base import Reject
from tests.fakeforge.gitea.state import Ctx, GiteaState, error, iso
from tests.fakeforge.httpserver import Response


class Pulls(GiteaState):
    def add_pull(
        self,
        full_name: str,
        number: int | None = None,
        *,
        head_sha: str,
        base_sha: str | None = None,
        head_ref: str = "feature",
        base_ref: str = "main",
        head_repo: str | None = None,
        state: str = "open",
        user: str = "alice",
        title: str = "A change",
        body: str = "",
    ) -> dict[str, Any]:
        """Register a pull request (``head_repo``: a fork; default the base repository)."""
        with self._lock:
            self._repo(full_name)
            number = number if number is not None else self._next_number(full_name)
            self._user_id(user)
            now = iso()
            self._pulls[full_name][number] = {
                "number": number,
                "id": self._next_id("issue"),
                "state": state,
                "title": title,
                "body": body,
                "user": user,
                "head_ref": head_ref,
                "head_sha": head_sha,
                "head_repo": head_repo or full_name,
                "base_ref": base_ref,
                "base_sha": base_sha or self._branch_sha(full_name, base_ref) or "0" * 40,
                "created_at": now,
                "updated_at": now,
            }
            return self._render_pull(full_name, number)

    def update_pull(self, full_name: str, number: int, **changes: Any) -> dict[str, Any]:
        with self._lock:
            pr = self._pulls[full_name][number]
            unknown = set(changes) - set(pr)
            if unknown:
                raise TypeError(f"unknown pull fields: {sorted(unknown)}")
            pr.update(changes, updated_at=iso())
            return self._render_pull(full_name, number)

    def pulls(self, full_name: str) -> list[dict[str, Any]]:
        with self._lock:
            return [self._render_pull(full_name, n) for n in sorted(self._pulls[full_name])]

    def _render_pull(self, full: str, number: int) -> dict[str, Any]:
        pr = self._pulls[full][number]

        def side(ref: str, sha: str, repo_full: str) -> dict[str, Any]:
            rendered = self._render_repo(repo_full)
            owner = repo_full.partition("/")[0]
            label = ref if repo_full == full else f"{owner}:{ref}"
            return {
                "label": label,
                "ref": ref,
                "sha": sha,
                "repo_id": rendered["id"],
                "repo": rendered,
            }

        web = f"{self.url}/{full}/pulls/{number}"
        out = {
            "id": pr["id"],
            "number": number,
            "url": web,
            "html_url": web,
            "diff_url": f"{web}.diff",
            "patch_url": f"{web}.patch",
            "user": self._render_user(pr["user"]),
            "title": pr["title"],
            "body": pr["body"],
            "state": "open" if pr["state"] == "open" else "closed",
            "draft": False,
            "is_locked": False,
            "comments": sum(
                1 for c in self._comments.values() if (c["repo"], c["number"]) == (full, number)
            ),
            "mergeable": pr["state"] == "open",
            "merged": pr["state"] == "merged",
            "head": side(pr["head_ref"], pr["head_sha"], pr["head_repo"]),
            "base": side(pr["base_ref"], pr["base_sha"], full),
            "created_at": pr["created_at"],
            "updated_at": pr["updated_at"],
        }
        if pr["state"] != "open":
            out["closed_at"] = pr["updated_at"]
        return out

    def _op_repoListPullRequests(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        q = ctx.req.query
        state = q.get("state") or "open"
        base = q.get("base_branch") or q.get("base")  # Gitea: base_branch; Forgejo: base, head
        head = q.get("head")
        found = [
            n
            for n, pr in sorted(self._pulls[ctx.repo.full_name].items(), reverse=True)
            if state in ("all", "open" if pr["state"] == "open" else "closed")
            and base in (None, pr["base_ref"])
            and head in (None, pr["head_ref"])
        ]
        items, headers = self._page(ctx.req, found)
        return Response(200, [self._render_pull(ctx.repo.full_name, n) for n in items], headers)

    def _op_repoGetPullRequest(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        return Response(200, self._render_pull(ctx.repo.full_name, self._ctx_pull(ctx)["number"]))

    def _op_repoEditPullRequest(self, ctx: Ctx) -> Response:
        """Title, description and state, as the bot changes them; Gitea answers 201."""
        assert ctx.repo is not None
        pr, body = self._ctx_pull(ctx), ctx.body or {}
        with self._lock:
            for key in ("title", "body"):
                if key in body:
                    pr[key] = str(body[key])
            if body.get("state") in ("open", "closed") and pr["state"] != "merged":
                pr["state"] = body["state"]
            pr["updated_at"] = iso()
        return Response(201, self._render_pull(ctx.repo.full_name, pr["number"]))

    def _op_repoGetPullRequestByBaseHead(self, ctx: Ctx) -> Response:
        """Like Gitea: the first pull for base and head, whatever its state."""
        assert ctx.repo is not None
        full = ctx.repo.full_name
        owner, _, branch = ctx.params["head"].rpartition(":")
        head_repo = f"{owner}/{ctx.repo.full_name.partition('/')[2]}" if owner else full
        for n, pr in sorted(self._pulls[full].items()):
            if (pr["base_ref"], pr["head_ref"], pr["head_repo"]) == (
                ctx.params["base"],
                branch,
                head_repo,
            ):
                return Response(200, self._render_pull(full, n))
        raise Reject(error(404, "pull request does not exist"))

    def _op_repoCreatePullRequest(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        full, body = ctx.repo.full_name, ctx.body or {}
        head, base = str(body.get("head") or ""), str(body.get("base") or "")
        head_sha, base_sha = self._branch_sha(full, head), self._branch_sha(full, base)
        if head_sha is None or base_sha is None:
            raise Reject(
                error(404, f"branch {head if head_sha is None else base!r} does not exist")
            )
        if head == base:
            raise Reject(
                error(
                    422, "Invalid PullRequest: There are no changes between the head and the base"
                )
            )
        for pr in self._pulls[full].values():
            if pr["state"] == "open" and (pr["head_ref"], pr["base_ref"]) == (head, base):
                message = (
                    f"pull request already exists for these targets [id: {pr['id']}, "
                    f"head_branch: {head}, base_branch: {base}]"
                )
                raise Reject(error(409, message))
        created = self.add_pull(
            full,
            head_sha=head_sha,
            base_sha=base_sha,
            head_ref=head,
            base_ref=base,
            user=self.bot_login,
            title=str(body.get("title") or ""),
            body=str(body.get("body") or ""),
        )
        return Response(201, created)
