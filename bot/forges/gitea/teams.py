"""Whether a login is a member of a Gitea/Forgejo team (``org/team``), for a target's
``approvers`` (design.md 5.1): the team's id found by name (``GET /orgs/{org}/teams/search``),
then ``GET /teams/{id}/members/{username}``.

Gitea shows a team's members only to a site admin, an owner of the organization or a member of
the team, to a token with the ``read:organization`` scope: otherwise 403 (or 404 to one outside
the organization), and the team admits nobody. A member whose account may not sign in
(``prohibit_login``, shown to an admin's token only) is not taken."""

from __future__ import annotations

import logging
from urllib.parse import quote

from bot.errors import ForgeStatusError, PermanentForgeError
from bot.forges.gitea.http import MAX_PAGES, PAGE_SIZE, GiteaHTTP

log = logging.getLogger("ichor.forge.gitea")

NEEDS_ORG = (
    "cannot read team %s (the token needs the read:organization scope, and its user must own "
    "the organization or belong to the team): %s"
)


def team_member(http: GiteaHTTP, team: str, login: str) -> bool:
    """No such team, not a member, or a team the token may not read: no."""
    org, _, name = team.partition("/")
    if not org or not name or "/" in name or not login:
        return False
    try:
        team_id = _team_id(http, org, name)
        if team_id is None:
            return False
        path = f"/teams/{team_id}/members/{quote(login, safe='')}"
        body = http.send("GET", path).body
    except ForgeStatusError as exc:
        if exc.status == 403:
            log.warning(NEEDS_ORG, team, exc)
            return False
        if exc.status == 404:
            return False
        raise
    return isinstance(body, dict) and body.get("prohibit_login") is not True


def _team_id(http: GiteaHTTP, org: str, name: str) -> int | None:
    """The id of ``org``'s team named ``name`` (Gitea's names ignore case); None: none."""
    path = f"/orgs/{quote(org, safe='')}/teams/search"
    query: dict[str, str | int] = {"q": name, "include_desc": "false", "limit": PAGE_SIZE}
    seen = 0
    for page in range(1, MAX_PAGES + 1):
        reply = http.send("GET", path, query={**query, "page": page})
        data = reply.body.get("data") if isinstance(reply.body, dict) else None
        if not isinstance(data, list):
            raise PermanentForgeError(f"Gitea GET {path}: the response holds no list of teams")
        for found in data:
            if (
                isinstance(found, dict)
                and isinstance(found.get("id"), int)
                and str(found.get("name", "")).casefold() == name.casefold()
            ):
                return int(found["id"])
        seen += len(data)
        total = reply.headers.get("x-total-count")
        if not data or (total is not None and total.isdigit() and seen >= int(total)):
            break
    return None
