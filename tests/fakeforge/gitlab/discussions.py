"""Discussions of the fake GitLab: diff discussions whose ``position`` must carry the MR's
latest version's base, start and head shas (``GET .../versions``), else **400** (the note's
line code cannot be resolved), and their resolution by the bot or by a person."""

from __future__ import annotations

import copy
from typing import Any

from tests.fakeforge.gitlab.core import GitLabCore
from tests.fakeforge.gitlab.records import iso
from tests.fakeforge.gitlab.routes import not_found
from tests.fakeforge.httpserver import Response


class Discussions(GitLabCore):
    # ------------------------------------------------------------------ test set-up
    def add_discussion(
        self,
        full_name: str,
        iid: int,
        body: str,
        *,
        author: str = "alice",
        path: str = "README.md",
        line: int = 1,
    ) -> dict[str, Any]:
        """A diff discussion by someone else, on the latest version."""
        with self._lock:
            project = self._project(full_name)
            mr = project["mrs"][iid]
            latest = mr["versions"][-1]
            position = {
                "position_type": "text",
                "base_sha": latest["base_commit_sha"],
                "start_sha": latest["start_commit_sha"],
                "head_sha": latest["head_commit_sha"],
                "old_path": path,
                "new_path": path,
                "new_line": line,
            }
            note = self._new_note(project, mr, body, self.add_user(author), position=position)
            discussion = self._new_discussion([note], individual=False)
            mr["discussions"].append(discussion)
            return copy.deepcopy(discussion)

    def resolve_discussion(
        self, full_name: str, iid: int, discussion_id: str, *, by: str = "alice"
    ) -> None:
        """A person resolves a discussion."""
        with self._lock:
            mr = self._project(full_name)["mrs"][iid]
            discussion = next(d for d in mr["discussions"] if d["id"] == discussion_id)
            self._resolve(discussion, True, self.add_user(by))

    # ------------------------------------------------------------------ observing
    def discussions(self, full_name: str, iid: int) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._project(full_name)["mrs"][iid]["discussions"])

    # ------------------------------------------------------------------ handlers
    def _op_list_discussions(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        _, mr = self._find_mr(path)
        return self._paged(path, params, copy.deepcopy(mr["discussions"]))

    def _op_create_discussion(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project, mr = self._find_mr(path)
        position = params.get("position")
        if position is not None:
            latest = mr["versions"][-1]
            stale = [
                f"position[{key}] {position.get(key)!r} is not the latest version's {field_}"
                for key, field_ in (
                    ("base_sha", "base_commit_sha"),
                    ("start_sha", "start_commit_sha"),
                    ("head_sha", "head_commit_sha"),
                )
                if position.get(key) != latest[field_]
            ]
            if stale:
                self._validation_errors.append(f"POST {path['_raw']}: " + "; ".join(stale))
                message = (
                    '400 Bad request - Note {:line_code=>["can\'t be blank", "must be a valid '
                    'line code"], :position=>["is incomplete"]}'
                )
                return Response(400, {"message": message})
            position = {
                "base_sha": position["base_sha"],
                "start_sha": position["start_sha"],
                "head_sha": position["head_sha"],
                "old_path": position.get("old_path") or position.get("new_path"),
                "new_path": position.get("new_path") or position.get("old_path"),
                "position_type": position["position_type"],
                "old_line": position.get("old_line"),
                "new_line": position.get("new_line"),
                "line_range": None,
            }
        note = self._new_note(
            project, mr, str(params["body"]), self.bot_user_id, position=position, resolvable=True
        )
        discussion = self._new_discussion([note], individual=False)
        mr["discussions"].append(discussion)
        return Response(201, copy.deepcopy(discussion))

    def _op_update_discussion(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        _, mr = self._find_mr(path)
        discussion = next((d for d in mr["discussions"] if d["id"] == path["discussion_id"]), None)
        if discussion is None:
            raise not_found("Discussion Not Found")
        if not discussion["notes"][0].get("resolvable"):
            return Response(400, {"message": "400 Bad request - Discussion is not resolvable"})
        self._resolve(discussion, bool(params["resolved"]), self.bot_user_id)
        return Response(200, copy.deepcopy(discussion))

    # ------------------------------------------------------------------ state helpers
    def _resolve(self, discussion: dict[str, Any], resolved: bool, by: int) -> None:
        for note in discussion["notes"]:
            if note.get("resolvable"):
                note["resolved"] = resolved
                note["resolved_by"] = self._render_user(by) if resolved else None
                note["resolved_at"] = iso() if resolved else None
                # GitLab saves the note: resolving moves updated_at, though no one edited it.
                note["updated_at"] = note["resolved_at"] or iso()
