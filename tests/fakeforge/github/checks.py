"""Check runs on the fake GitHub: created, updated (annotations appended, ``actions`` kept),
read, their annotations, and the runs of a ref."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from tests.fakeforge.github.core import GitHubCore
from tests.fakeforge.github.model import Ctx, b64, error, iso, not_found, time_now
from tests.fakeforge.httpserver import Response
from tests.fakeforge.openapi import overlay_object


class ChecksMixin(GitHubCore):
    def check_runs(self, full_name: str) -> list[dict[str, Any]]:
        """Current check runs of a repository, oldest first; ``output.annotations`` holds
        every annotation received (PATCHes append)."""
        with self._lock:
            return [
                self._render_check_run(run, with_annotations=True)
                for run in self._check_runs.values()
                if run["repo"] == full_name
            ]

    def check_run(self, check_run_id: int) -> dict[str, Any]:
        with self._lock:
            return self._render_check_run(self._check_runs[check_run_id], with_annotations=True)

    def _render_check_run(
        self, run: dict[str, Any], *, with_annotations: bool = False
    ) -> dict[str, Any]:
        full = run["repo"]
        api = f"{self.url}/repos/{full}/check-runs/{run['id']}"
        out = overlay_object(
            self._skeleton("check-run"),
            {
                "id": run["id"],
                "node_id": "CR_" + b64(str(run["id"])),
                "head_sha": run["head_sha"],
                "name": run["name"],
                "external_id": run["external_id"],
                "url": api,
                "html_url": f"{self.web_url}/{full}/runs/{run['id']}",
                "details_url": run["details_url"],
                "status": run["status"],
                "conclusion": run["conclusion"],
                "started_at": run["started_at"],
                "completed_at": run["completed_at"],
                "output": {
                    "title": run["output"].get("title"),
                    "summary": run["output"].get("summary"),
                    "text": run["output"].get("text"),
                    "annotations_count": len(run["annotations"]),
                    "annotations_url": f"{api}/annotations",
                },
                "check_suite": {"id": run["check_suite_id"]},
                "app": self._app(),
                "pull_requests": [
                    self._minimal_pull(full, n)
                    for n, pr in sorted(self._pulls.get(full, {}).items())
                    if pr["head_sha"] == run["head_sha"] and pr["state"] == "open"
                ],
            },
        )
        if with_annotations:
            out["output"]["annotations"] = copy.deepcopy(run["annotations"])
            out["output"]["images"] = copy.deepcopy(run["output"].get("images", []))
            out["actions"] = copy.deepcopy(run["actions"])
        return out

    # ------------------------------------------------------------------ endpoints
    def _op_checks_create(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        body = ctx.body
        full = ctx.repo.full_name
        exists = self._has_commit(full, body["head_sha"])
        if exists is False:
            message = f"No commit found for SHA: {body['head_sha']}"
            self._validation_errors.append(f"POST {ctx.req.path}: {message}")
            return Response(422, error(message, 422))
        now = iso(time_now())
        suite = self._suites.setdefault((full, body["head_sha"]), self._next_id("suite"))
        run: dict[str, Any] = {
            "id": self._next_id("check_run"),
            "repo": full,
            "head_sha": body["head_sha"],
            "name": body["name"],
            "external_id": body.get("external_id", ""),
            "details_url": body.get("details_url", f"{self.web_url}/apps/{self.app_slug}"),
            "status": body.get("status", "queued"),
            "conclusion": None,
            "started_at": body.get("started_at", now),
            "completed_at": None,
            "output": {},
            "annotations": [],
            "actions": [],
            "check_suite_id": suite,
        }
        self._apply_check_run(run, body)
        self._check_runs[run["id"]] = run
        return Response(201, self._render_check_run(run))

    def _apply_check_run(self, run: dict[str, Any], body: Mapping[str, Any]) -> None:
        for key in ("name", "details_url", "external_id", "started_at", "status"):
            if key in body:
                run[key] = body[key]
        if "conclusion" in body:
            run["conclusion"] = body["conclusion"]
            run["status"] = "completed"
            run["completed_at"] = body.get("completed_at", iso(time_now()))
        elif run["status"] != "completed":
            run["conclusion"] = run["completed_at"] = None
        if "actions" in body:
            run["actions"] = copy.deepcopy(body["actions"])
        if "output" in body:
            out = body["output"]
            for key in ("title", "summary", "text"):
                if key in out:
                    run["output"][key] = out[key]
            if "images" in out:
                run["output"]["images"] = copy.deepcopy(out["images"])
            blob = f"{self.web_url}/{run['repo']}/blob/{run['head_sha']}/"
            for ann in out.get("annotations", []):
                stored = {
                    "path": ann["path"],
                    "blob_href": blob + quote(ann["path"]),
                    "start_line": ann["start_line"],
                    "end_line": ann["end_line"],
                    "start_column": ann.get("start_column"),
                    "end_column": ann.get("end_column"),
                    "annotation_level": ann["annotation_level"],
                    "title": ann.get("title"),
                    "message": ann["message"],
                    "raw_details": ann.get("raw_details"),
                }
                run["annotations"].append(stored)

    def _existing_run(self, ctx: Ctx) -> dict[str, Any] | None:
        assert ctx.repo is not None
        run = self._check_runs.get(int(ctx.params["check_run_id"]))
        return run if run is not None and run["repo"] == ctx.repo.full_name else None

    def _op_checks_get(self, ctx: Ctx) -> Response:
        run = self._existing_run(ctx)
        return not_found() if run is None else Response(200, self._render_check_run(run))

    def _op_checks_update(self, ctx: Ctx) -> Response:
        run = self._existing_run(ctx)
        if run is None:
            return not_found()
        self._apply_check_run(run, ctx.body or {})
        return Response(200, self._render_check_run(run))

    def _op_checks_list_annotations(self, ctx: Ctx) -> Response:
        run = self._existing_run(ctx)
        if run is None:
            return not_found()
        items, headers = self._page(ctx.req, copy.deepcopy(run["annotations"]))
        return Response(200, items, headers)

    def _op_checks_list_for_ref(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        full, ref, q = ctx.repo.full_name, ctx.params["ref"], ctx.req.query
        sha = (
            ref
            if re.fullmatch(r"[0-9a-f]{40}", ref)
            else self._branch_sha(full, ref.removeprefix("heads/"))
        )
        runs = [
            r
            for r in self._check_runs.values()
            if r["repo"] == full
            and r["head_sha"] == sha
            and q.get("check_name", r["name"]) == r["name"]
            and q.get("status", r["status"]) == r["status"]
        ]
        runs.sort(key=lambda r: -r["id"])
        if q.get("filter", "latest") == "latest":
            latest: dict[str, dict[str, Any]] = {}
            for r in runs:
                latest.setdefault(r["name"], r)
            runs = list(latest.values())
        items, headers = self._page(ctx.req, runs)
        return Response(
            200,
            {"total_count": len(runs), "check_runs": [self._render_check_run(r) for r in items]},
            headers,
        )
