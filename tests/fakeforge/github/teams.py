"""Teams on the fake GitHub: who is an active member of ``org/team``, read with ``GET
/orgs/{org}/teams/{team_slug}/memberships/{username}`` (the installation needs the
organization permission ``members: read``). Not a member, or no such team: 404, as GitHub
answers both."""

from __future__ import annotations

from tests.fakeforge.github.core import GitHubCore
from tests.fakeforge.github.model import Ctx, not_found
from tests.fakeforge.httpserver import Response


class TeamsMixin(GitHubCore):
    # ------------------------------------------------------------------ test set-up
    def add_team_member(self, team: str, login: str, *, state: str = "active") -> None:
        """``team`` as ``org/slug``; ``state``: active, or pending (invited, not yet in)."""
        org, _, slug = team.partition("/")
        with self._lock:
            self._team_members.setdefault((org.lower(), slug.lower()), {})[login.lower()] = state

    # ------------------------------------------------------------------ endpoints
    def _op_teams_get_membership_for_user_in_org(self, ctx: Ctx) -> Response:
        team = self._team_members.get((ctx.params["org"].lower(), ctx.params["team_slug"].lower()))
        state = None if team is None else team.get(ctx.params["username"].lower())
        if state is None:
            return not_found()
        url = f"https://api.github.com/organizations/1/team/1/memberships/{ctx.params['username']}"
        return Response(200, {"url": url, "role": "member", "state": state})
