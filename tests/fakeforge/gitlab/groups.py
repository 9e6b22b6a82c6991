"""Groups of the fake GitLab, for a target's ``approvers`` naming a team: a group path
(``group/subgroup``) and who is in it, read with ``GET /groups/:id/members/all/:user_id``.

As GitLab answers: ``:id`` is the group's id or its URL-encoded full path (matched ignoring
case); the members of the group's ancestors are inherited, and a user in several of them is
answered once, with the highest access level. No such group: **404** ``Group Not Found``; not a
member: **404** ``Not found``. A member's ``state`` is their account's (``blocked`` for a
blocked one), ``membership_state`` is ``awaiting`` while an invitation or a seat waits."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from tests.fakeforge.gitlab.core import GitLabCore
from tests.fakeforge.gitlab.records import iso
from tests.fakeforge.gitlab.routes import not_found
from tests.fakeforge.httpserver import Response

TEAM_STATES = ("active", "awaiting", "blocked")


class Groups(GitLabCore):
    # ------------------------------------------------------------------ test set-up
    def add_group(self, full_path: str) -> int:
        """A group (and its missing ancestors); the existing one of that path, if any."""
        with self._lock:
            parent, _, _ = full_path.rpartition("/")
            if parent:
                self.add_group(parent)
            found = self._group_by_path(full_path)
            if found is not None:
                return int(found["id"])
            group_id = self._next_id("group")
            self._groups[group_id] = {"id": group_id, "full_path": full_path, "members": {}}
            return group_id

    def add_team_member(
        self, team: str, login: str, *, access_level: int = 30, state: str = "active"
    ) -> int:
        """``login`` a member of group ``team`` (a path) with ``access_level`` (5 minimal
        access, 10 guest … 50 owner). ``state``: active; awaiting (invited, or waiting for a
        seat: not in yet); blocked (the user's account is blocked). Returns the user id."""
        if state not in TEAM_STATES:
            raise ValueError(f"state must be one of {TEAM_STATES}")
        with self._lock:
            group = self._groups[self.add_group(team)]
            user_id = self.add_user(login)
            if state == "blocked":
                self._users[user_id]["state"] = "blocked"
            membership = "awaiting" if state == "awaiting" else "active"
            group["members"][user_id] = {"access_level": access_level, "state": membership}
            return user_id

    # ------------------------------------------------------------------ handlers
    def _op_get_group_member(self, path: dict[str, str], params: dict[str, Any]) -> Response:
        ident = unquote(path["group"])
        with self._lock:
            group = self._groups.get(int(ident)) if ident.isdigit() else self._group_by_path(ident)
            if group is None:
                raise not_found("Group Not Found")
            user_id = int(path["user_id"])
            found = [
                g["members"][user_id]
                for g in self._lineage(group["full_path"])
                if user_id in g["members"]
            ]
            if not found or user_id not in self._users:
                raise not_found()
            best = max(found, key=lambda m: int(m["access_level"]))
            member = {
                **self._render_user(user_id),
                "access_level": best["access_level"],
                "created_at": iso(),
                "expires_at": None,
                "membership_state": best["state"],
            }
        return Response(200, member)

    # ------------------------------------------------------------------ helpers
    def _group_by_path(self, full_path: str) -> dict[str, Any] | None:
        wanted = full_path.lower()  # GitLab finds a route ignoring case
        return next((g for g in self._groups.values() if g["full_path"].lower() == wanted), None)

    def _lineage(self, full_path: str) -> list[dict[str, Any]]:
        """The group of ``full_path`` and its ancestors."""
        parts = full_path.split("/")
        paths = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        return [g for p in paths if (g := self._group_by_path(p)) is not None]
