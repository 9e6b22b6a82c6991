"""Notes of the fake GitLab: an MR's comments, listed oldest or newest first (each plain note is
its own individual discussion), created by the token's user, and edited only by their author
(**403** otherwise); an edit moves ``updated_at`` past ``created_at``, as GitLab's REST answer
has no ``last_edited_at``. Award emoji on a note: one per user and name (GitLab's ``404 Award
Emoji Name has already been taken`` for a second), none on a system note, recorded for tests
(:meth:`Notes.awards`)."""

from __future__ import annotations

import copy
from typing import Any

from tests.fakeforge.gitlab.core import GitLabCore
from tests.fakeforge.gitlab.records import iso, later_than
from tests.fakeforge.gitlab.routes import not_found
from tests.fakeforge.httpserver import Response

# Names GitLab knows (a small part of its emoji list: what tests and the bot use).
EMOJI = frozenset(
    {"eyes", "thumbsup", "thumbsdown", "confused", "heart", "tada", "rocket", "white_check_mark"}
)


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

    def edit_note(self, full_name: str, iid: int, note_id: int, body: str) -> dict[str, Any]:
        """Its author edits a note: a new body, ``updated_at`` later than ``created_at``."""
        with self._lock:
            note = self._note(self._project(full_name)["mrs"][iid], note_id)
            if note is None:
                raise KeyError(f"{full_name}!{iid} has no note {note_id}")
            note["body"], note["updated_at"] = body, later_than(note["created_at"])
            return copy.deepcopy(note)

    # ------------------------------------------------------------------ observing
    def notes(self, full_name: str, iid: int) -> list[dict[str, Any]]:
        """Every note of the MR (discussion notes included), oldest first."""
        with self._lock:
            mr = self._project(full_name)["mrs"][iid]
            return [copy.deepcopy(n) for d in mr["discussions"] for n in d["notes"]]

    def awards(self, full_name: str, iid: int, note_id: int) -> list[dict[str, Any]]:
        """The award emoji on a note of the MR, oldest first, as GitLab renders them."""
        with self._lock:
            mr = self._project(full_name)["mrs"][iid]
            return copy.deepcopy(mr.get("awards", {}).get(note_id, []))

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
        note = self._note(mr, int(path["note_id"]))
        if note is None:
            raise not_found("Note Not Found")
        if note["author"]["id"] != self.bot_user_id:
            return Response(403, {"message": "403 Forbidden"})
        note["body"], note["updated_at"] = str(params["body"]), later_than(note["created_at"])
        return Response(200, copy.deepcopy(note))

    def _op_award_note_emoji(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        _, mr = self._find_mr(path)
        note = self._note(mr, int(path["note_id"]))
        if note is None:
            raise not_found("Note Not Found")
        if note["system"]:  # GitLab: a system note is not awardable
            raise not_found("Award Emoji Not Found")
        name = str(params["name"])
        if name not in EMOJI:
            raise not_found("Award Emoji Name is not a valid emoji name")
        awards = mr.setdefault("awards", {}).setdefault(note["id"], [])
        if any(a["name"] == name and a["user"]["id"] == self.bot_user_id for a in awards):
            raise not_found("Award Emoji Name has already been taken")
        now = iso()
        award = {
            "id": self._next_id("award"),
            "name": name,
            "user": self._render_user(self.bot_user_id),
            "created_at": now,
            "updated_at": now,
            "awardable_id": note["id"],
            "awardable_type": "Note",
            "url": None,
        }
        awards.append(award)
        return Response(201, copy.deepcopy(award))

    # ------------------------------------------------------------------ state helpers
    def _note(self, mr: dict[str, Any], note_id: int) -> dict[str, Any] | None:
        return next((n for d in mr["discussions"] for n in d["notes"] if n["id"] == note_id), None)
