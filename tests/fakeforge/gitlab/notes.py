"""Notes of the fake GitLab: an MR's comments, listed oldest or newest first (each plain note is
its own individual discussion), created by the token's user, and edited only by their author
(**403** otherwise)."""

from __future__ import annotations

import copy
from typing import Any

from tests.fakeforge.gitlab.core import GitLabCore
from tests.fakeforge.gitlab.records import iso
from tests.fakeforge.gitlab.routes import not_found
from tests.fakeforge.httpserver import Response


class Notes(GitLabCore):
    # ------------------------------------------------------------------ test set-up
    def add_note(
        self, full_name: str, iid: int, body: str, *, author: str = "alice", system: bool = False
    ) -> dict[str, Any]:
        """A note by someone else on the MR (its own individual discussion)."""
        with self._lock:
            project = self._project(full_name)
            mr = project["mrs"][iid]
            note = self._new_note(project, mr, body, self.add_user(author), system=system)
            mr["discussions"].append(self._new_discussion([note], individual=True))
            return copy.deepcopy(note)

    # ------------------------------------------------------------------ observing
    def notes(self, full_name: str, iid: int) -> list[dict[str, Any]]:
        """Every note of the MR (discussion notes included), oldest first."""
        with self._lock:
            mr = self._project(full_name)["mrs"][iid]
            return [copy.deepcopy(n) for d in mr["discussions"] for n in d["notes"]]

    # ------------------------------------------------------------------ handlers
    def _op_list_notes(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        _, mr = self._find_mr(path)
        notes = [n for d in mr["discussions"] for n in d["notes"]]
        key = params.get("order_by", "created_at")
        notes.sort(key=lambda n: (n[key], n["id"]), reverse=params.get("sort", "desc") == "desc")
        return self._paged(path, params, copy.deepcopy(notes))

    def _op_create_note(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        project, mr = self._find_mr(path)
        note = self._new_note(project, mr, str(params["body"]), self.bot_user_id)
        mr["discussions"].append(self._new_discussion([note], individual=True))
        return Response(201, copy.deepcopy(note))

    def _op_update_note(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        _, mr = self._find_mr(path)
        note_id = int(path["note_id"])
        note = next((n for d in mr["discussions"] for n in d["notes"] if n["id"] == note_id), None)
        if note is None:
            raise not_found("Note Not Found")
        if note["author"]["id"] != self.bot_user_id:
            return Response(403, {"message": "403 Forbidden"})
        note["body"], note["updated_at"] = str(params["body"]), iso()
        return Response(200, copy.deepcopy(note))
