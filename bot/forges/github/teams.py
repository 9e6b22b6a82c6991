"""Whether a login is an active member of a GitHub team (``org/team-slug``), for a target's
``approvers`` (design.md 5.1). The App needs the organization permission ``members: read``."""

from __future__ import annotations

import logging
from urllib.parse import quote

from bot.errors import ForgeStatusError
from bot.forges.rest.send import Send

log = logging.getLogger("ichor.forge.github")


def team_member(send: Send, team: str, login: str) -> bool:
    """404 (not a member, or no such team) and 403 (the App may not read members) both mean no:
    a team the bot cannot see admits nobody."""
    org, _, slug = team.partition("/")
    if not org or not slug or "/" in slug:
        return False  # a GitLab-style group path names no GitHub team
    path = f"/orgs/{quote(org, safe='')}/teams/{quote(slug, safe='')}/memberships/"
    path += quote(login, safe="")
    try:
        body = send("GET", path)
    except ForgeStatusError as exc:
        if exc.status == 403:
            log.warning("cannot read team %s (the App needs members: read): %s", team, exc)
            return False
        if exc.status == 404:
            return False
        raise
    return isinstance(body, dict) and body.get("state") == "active"
