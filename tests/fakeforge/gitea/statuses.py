"""Commit statuses: posted, listed newest first (Gitea keeps every one), observed."""

from __future__ import annotations

from typing import Any

from tests.fakeforge.gitea.state import API_PREFIX, Ctx, GiteaState, iso
from tests.fakeforge.httpserver import Response
from tests.fakeforge.openapi import Operation, Problem


class Statuses(GiteaState):
    def statuses(self, full_name: str, sha: str) -> list[dict[str, Any]]:
        """Commit statuses of ``sha``, oldest first (Gitea keeps every one)."""
        with self._lock:
            return [
                self._render_status(s)
                for s in self._statuses
                if s["repo"] == full_name and s["sha"] == sha
            ]

    def _render_status(self, s: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": s["id"],
            "status": s["state"],
            "context": s["context"],
            "description": s["description"],
            "target_url": s["target_url"],
            "url": f"{self.url}{API_PREFIX}/repos/{s['repo']}/statuses/{s['sha']}",
            "creator": self._render_user(s["creator"]),
            "created_at": s["created_at"],
            "updated_at": s["created_at"],
        }

    def _op_repoCreateStatus(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        body = ctx.body or {}
        status = {
            "id": self._next_id("status"),
            "repo": ctx.repo.full_name,
            "sha": ctx.params["sha"],
            "state": body["state"],
            "context": body.get("context") or "default",
            "description": body.get("description") or "",
            "target_url": body.get("target_url") or "",
            "creator": self.bot_login,
            "created_at": iso(),
        }
        self._statuses.append(status)
        return Response(201, self._render_status(status))

    def _op_repoListStatuses(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        found = [
            s
            for s in reversed(self._statuses)
            if s["repo"] == ctx.repo.full_name and s["sha"] == ctx.params["sha"]
        ]
        items, headers = self._page(ctx.req, found)
        return Response(200, [self._render_status(s) for s in items], headers)

    def _documented_rules(self, op: Operation, body: Any) -> list[Problem]:
        problems = super()._documented_rules(op, body)
        if not isinstance(body, dict):
            return problems
        if op.operation_id == "repoCreateStatus" and not body.get("state"):
            problems.append(
                Problem("state", "missing_field", "state: a commit status needs a state")
            )
        return problems
