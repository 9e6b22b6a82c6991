"""Merge requests of the fake GitLab: their versions (one per push, newest first when listed;
only a single merge request's answer carries its ``diff_refs``), listing by state and branch,
opening one (**409** when one is open for the branch pair), updating its title, description,
target or state, and their ``refs/merge-requests`` in the bare repository."""

from __future__ import annotations

from typing import Any

from tests.fakeforge.gitlab.records import iso
from tests.fakeforge.gitlab.repositories import Repositories
from tests.fakeforge.httpserver import Response


class MergeRequests(Repositories):
    # ------------------------------------------------------------------ test set-up
    def add_merge_request(
        self,
        full_name: str,
        iid: int,
        head_sha: str,
        base_sha: str,
        source_branch: str = "feature",
        target_branch: str = "main",
        source_project_id: int | None = None,
        *,
        title: str = "A change",
        author: str = "alice",
        state: str = "opened",
        description: str = "",
    ) -> dict[str, Any]:
        """An MR with its first version; ``refs/merge-requests/<iid>/head`` is set in the bare
        repository when there is one holding ``head_sha``."""
        with self._lock:
            project = self._project(full_name)
            if iid in project["mrs"]:
                raise ValueError(f"{full_name}!{iid} exists")
            project["mrs"][iid] = {
                "id": self._next_id("mr"),
                "iid": iid,
                "title": title,
                "description": description,
                "state": state,
                "source_branch": source_branch,
                "target_branch": target_branch,
                "source_project_id": source_project_id or project["id"],
                "author_id": self.add_user(author),
                "created_at": iso(),
                "versions": [],
                "discussions": [],
            }
            self.push_merge_request(full_name, iid, head_sha, base_sha)
            return self._render_mr(project, project["mrs"][iid], detailed=True)

    def push_merge_request(
        self, full_name: str, iid: int, head_sha: str, base_sha: str | None = None
    ) -> dict[str, Any]:
        """A push to the MR's source branch: a new latest version."""
        with self._lock:
            project = self._project(full_name)
            mr = project["mrs"][iid]
            base = base_sha or mr["versions"][-1]["base_commit_sha"]
            version = {
                "id": self._next_id("version"),
                "head_commit_sha": head_sha,
                "base_commit_sha": base,
                "start_commit_sha": base,
                "created_at": iso(),
                "merge_request_id": mr["id"],
                "state": "collected",
                "real_size": "1",
            }
            mr["versions"].append(version)
            mr["updated_at"] = version["created_at"]
            self._set_mr_ref(full_name, iid, head_sha)
            return dict(version)

    # ------------------------------------------------------------------ observing
    def merge_requests(self, full_name: str) -> list[dict[str, Any]]:
        with self._lock:
            project = self._project(full_name)
            return [self._render_mr(project, mr, True) for mr in project["mrs"].values()]

    # ------------------------------------------------------------------ handlers
    def _op_list_mrs(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project = self._find_project(path["project"])
        state = params.get("state", "all")
        mrs = [
            self._render_mr(project, mr, detailed=False)
            for mr in sorted(project["mrs"].values(), key=lambda m: -int(m["id"]))
            if state in ("all", mr["state"])
            and params.get("source_branch", mr["source_branch"]) == mr["source_branch"]
            and params.get("target_branch", mr["target_branch"]) == mr["target_branch"]
        ]
        if params.get("sort") == "asc":
            mrs.reverse()
        return self._paged(path, params, mrs)

    def _op_create_mr(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project = self._find_project(path["project"])
        source, target = str(params["source_branch"]), str(params["target_branch"])
        for mr in project["mrs"].values():
            duplicate = (
                mr["state"] == "opened"
                and mr["source_branch"] == source
                and mr["source_project_id"] == project["id"]
                and mr["target_branch"] == target
            )
            if duplicate:
                exists = "Another open merge request already exists for this source branch"
                return Response(409, {"message": [f"{exists}: !{mr['iid']}"]})
        head = self._branch_sha(project, source)
        base = self._branch_sha(project, target)
        if head is None:
            return Response(400, {"message": ["Source branch is invalid"]})
        iid = max(project["mrs"], default=0) + 1
        self.add_merge_request(
            project["full_name"], iid, head, base or head, source, target, author=self.bot_username
        )
        mr = project["mrs"][iid]
        mr["title"], mr["description"] = params["title"], params.get("description") or ""
        return Response(201, self._render_mr(project, mr, detailed=True))

    def _op_get_mr(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project, mr = self._find_mr(path)
        return Response(200, self._render_mr(project, mr, detailed=True))

    def _op_update_mr(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project, mr = self._find_mr(path)
        with self._lock:
            for key in ("title", "description", "target_branch"):
                if key in params:
                    mr[key] = str(params[key])
            if params.get("state_event") in ("close", "reopen"):
                mr["state"] = "closed" if params["state_event"] == "close" else "opened"
            mr["updated_at"] = iso()
        return Response(200, self._render_mr(project, mr, detailed=True))

    def _op_list_versions(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        _, mr = self._find_mr(path)
        return self._paged(path, params, [dict(v) for v in reversed(mr["versions"])])

    # ------------------------------------------------------------------ rendering
    def _render_mr(
        self, project: dict[str, Any], mr: dict[str, Any], detailed: bool
    ) -> dict[str, Any]:
        latest = mr["versions"][-1]
        full = project["full_name"]
        item: dict[str, Any] = {
            "id": mr["id"],
            "iid": mr["iid"],
            "project_id": project["id"],
            "title": mr["title"],
            "description": mr["description"],
            "state": mr["state"],
            "created_at": mr["created_at"],
            "updated_at": mr.get("updated_at", mr["created_at"]),
            "merged_by": None,
            "merged_at": None,
            "closed_at": None,
            "target_branch": mr["target_branch"],
            "source_branch": mr["source_branch"],
            "user_notes_count": sum(len(d["notes"]) for d in mr["discussions"]),
            "author": self._render_user(mr["author_id"]),
            "assignees": [],
            "reviewers": [],
            "source_project_id": mr["source_project_id"],
            "target_project_id": project["id"],
            "labels": [],
            "draft": False,
            "work_in_progress": False,
            "merge_when_pipeline_succeeds": False,
            "merge_status": "can_be_merged",
            "detailed_merge_status": "mergeable",
            "sha": latest["head_commit_sha"],
            "merge_commit_sha": None,
            "squash_commit_sha": None,
            "references": {
                "short": f"!{mr['iid']}",
                "relative": f"!{mr['iid']}",
                "full": f"{full}!{mr['iid']}",
            },
            "web_url": f"{self.url}/{full}/-/merge_requests/{mr['iid']}",
            "has_conflicts": False,
            "blocking_discussions_resolved": True,
        }
        if detailed:  # only a single merge request's answer carries its diff refs
            item["diff_refs"] = {
                "base_sha": latest["base_commit_sha"],
                "head_sha": latest["head_commit_sha"],
                "start_sha": latest["start_commit_sha"],
            }
        return item
