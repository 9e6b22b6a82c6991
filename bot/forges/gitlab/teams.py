"""Whether a user is an active member of a GitLab group (``group/subgroup``, a team of a
target's ``approvers``, design.md 5.1): ``GET /groups/:id/members/all/:user_id``, inherited
memberships included. Runs under :meth:`.api.GitLabAPI.run` with the python-gitlab client."""

from __future__ import annotations

import gitlab

from bot.errors import ForgeStatusError
from bot.forges.gitlab.api import active_level, user_id

GUEST = 10  # the least access level that counts (5, minimal access, does not)


def team_member(gl: gitlab.Gitlab, team: str, login: str) -> bool:
    """No such account, no such group (or one the token may not see), or not a member: no."""
    group = team.strip("/")
    if not group or group != team:
        return False
    account = user_id(gl, login)
    if account is None:
        return False
    try:
        member = gl.groups.get(group, lazy=True).members_all.get(account)
    except ForgeStatusError as exc:
        if exc.status == 404:  # "Group Not Found" or "Not found": nobody of it admitted
            return False
        raise
    return active_level(member.attributes) >= GUEST
