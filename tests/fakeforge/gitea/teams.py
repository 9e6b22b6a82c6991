"""Teams of the fake Gitea/Forgejo, for a target's ``approvers`` naming ``org/team``: the team
found by name (``GET /orgs/{org}/teams/search?q=``), then one member read
(``GET /teams/{id}/members/{username}``).

As Gitea answers: the search matches the keyword within a team's name (and its description
unless ``include_desc=false``), ordered by name, paged with ``page``/``limit`` and
``X-Total-Count``, in ``{"data": [...], "ok": true}``; no such organization is a 404. A member
is answered with the user (``prohibit_login`` true for a blocked account, as a site admin's
token sees it); not a member, no such user or no such team: 404. The token's user is taken to
own the organization (else Gitea answers 403: inject it)."""

from __future__ import annotations

from typing import Any

from tests.fakeforge.base import Reject
from tests.fakeforge.gitea.state import Ctx, GiteaState, error
from tests.fakeforge.httpserver import Response

TEAM_STATES = ("active", "blocked")


class Teams(GiteaState):
    # ------------------------------------------------------------------ test set-up
    def add_team(self, team: str, *, description: str = "") -> int:
        """Team ``org/name`` (the existing one, if any); returns its id."""
        org, _, name = team.partition("/")
        if not org or not name or "/" in name:
            raise ValueError(f"org/team expected, got {team!r}")
        with self._lock:
            self._user_id(org)
            for team_id, found in self._teams.items():
                if found["org"] == org and found["name"].lower() == name.lower():
                    return team_id
            team_id = self._next_id("team")
            self._teams[team_id] = {
                "org": org,
                "name": name,
                "description": description,
                "members": {},
            }
            return team_id

    def add_team_member(self, team: str, login: str, *, state: str = "active") -> None:
        """``login`` in team ``org/name``; ``state``: active, or blocked (the account may not
        sign in: Gitea still lists it)."""
        if state not in TEAM_STATES:
            raise ValueError(f"state must be one of {TEAM_STATES}")
        with self._lock:
            self._user_id(login)
            self._teams[self.add_team(team)]["members"][login] = state

    # ------------------------------------------------------------------ endpoints
    def _op_teamSearch(self, ctx: Ctx) -> Response:
        org = ctx.params["org"]
        if org not in self._users:
            raise Reject(error(404, f"user redirect does not exist [name: {org}]"))
        keyword = str(ctx.req.query.get("q") or "").lower()
        in_desc = str(ctx.req.query.get("include_desc") or "true").lower() != "false"
        found = sorted(
            (
                (team_id, t)
                for team_id, t in self._teams.items()
                if t["org"] == org
                and (
                    keyword in t["name"].lower()
                    or (in_desc and keyword in t["description"].lower())
                )
            ),
            key=lambda item: item[1]["name"].lower(),
        )
        items, headers = self._page(ctx.req, found)
        body = {"data": [self._render_team(i, t) for i, t in items], "ok": True}
        return Response(200, body, headers)

    def _op_orgListTeamMember(self, ctx: Ctx) -> Response:
        team = self._teams.get(int(ctx.params["id"]))
        login = ctx.params["username"]
        if team is None or login not in self._users:
            raise Reject(error(404, "The target couldn't be found."))
        state = team["members"].get(login)
        if state is None:
            raise Reject(error(404, "The target couldn't be found."))
        return Response(200, {**self._render_user(login), "prohibit_login": state == "blocked"})

    # ------------------------------------------------------------------ rendering
    def _render_team(self, team_id: int, team: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": team_id,
            "name": team["name"],
            "description": team["description"],
            "permission": "read",
            "includes_all_repositories": False,
            "can_create_org_repo": False,
        }
