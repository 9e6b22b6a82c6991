"""Who may run a command (design.md 5): a pure decision from the actor's permission.

The permission comes from the forge (a failed lookup never reaches here: the caller refuses
and says the lookup failed) and ``min_permission`` from the base branch's ``.ichor.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.command import ApproveCancel, ApproveHead, Command, Help, Recheck
from bot.forges.base import Permission

PERMISSION_NAMES = {p.name.lower(): p for p in Permission if p is not Permission.NONE}


def permission_named(name: str) -> Permission:
    """``commands.min_permission`` as a Permission (the schema allows only these names)."""
    return PERMISSION_NAMES[name]


def required_permission(command: Command, min_permission: Permission) -> Permission:
    """The least permission ``command`` needs. ``/approve cancel`` needs only ``read``: it
    withdraws the actor's own approval, and there is nothing to withdraw for anyone else."""
    if isinstance(command, Help):
        return Permission.NONE
    if isinstance(command, Recheck | ApproveCancel):
        return Permission.READ
    return min_permission


@dataclass(frozen=True, slots=True)
class Authorization:
    """Who asks, and what the pull request and the configuration say about it."""

    actor: str
    permission: Permission
    min_permission: Permission
    pr_author: str | None
    allow_author_approval: bool


def refusal(command: Command, auth: Authorization) -> str | None:
    """Why ``command`` is refused for this actor (a sentence for the reply), or None."""
    needed = required_permission(command, auth.min_permission)
    if auth.permission < needed:
        held = "no access" if auth.permission is Permission.NONE else f"`{_name(auth.permission)}`"
        return (
            f"it needs `{_name(needed)}` permission on this repository, and @{auth.actor} has "
            f"{held}"
        )
    if (
        isinstance(command, ApproveHead)
        and not auth.allow_author_approval
        and auth.pr_author is not None
        and auth.actor.casefold() == auth.pr_author.casefold()
    ):
        return (
            "the author of a pull request cannot approve its own new objects "
            "(`commands.allow_author_approval` is off); ask another maintainer"
        )
    return None


def _name(permission: Permission) -> str:
    return permission.name.lower()
