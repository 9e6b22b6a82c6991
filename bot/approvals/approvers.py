"""Who may approve an object of a target (design.md 5.1). Pure.

A target without ``approvers`` takes an approval from anyone the permission check lets through.
With a list, only those named (a login, or a team ``org/team``); with ``codeowners``, only the
owners the forge's CODEOWNERS file names for the object's file. Team membership is the forge's
to say: the caller passes ``is_member`` (None when this forge cannot be asked, and then a team
entry admits nobody).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bot.approvals.codeowners import CodeOwners
from bot.approvals.pending import NewObject

CODEOWNERS = "codeowners"
Approvers = tuple[str, ...] | str | None  # a target's setting: names, "codeowners" or unset
IsMember = Callable[[str, str], bool]  # (team, login) -> whether login is in team


@dataclass(frozen=True, slots=True)
class NotYours:
    """An object the actor may not approve, and who may."""

    object: NewObject
    approvers: tuple[str, ...]  # as configured or owned; empty: nobody (no owner, no file)
    owners_file: str | None  # the CODEOWNERS file that named them; None: the target's list
    problem: str | None = None  # why that file could not be used


@dataclass(frozen=True, slots=True)
class Split:
    mine: tuple[NewObject, ...]
    not_mine: tuple[NotYours, ...]


def may_approve(
    objects: Sequence[NewObject],
    actor: str,
    approvers: Mapping[str, Approvers],
    owners: CodeOwners | None,
    is_member: IsMember | None,
) -> Split:
    """``objects`` split into those ``actor`` may approve and the others, with who may."""
    mine: list[NewObject] = []
    not_mine: list[NotYours] = []
    member_cache: dict[str, bool] = {}

    def admits(names: Sequence[str]) -> bool:
        for name in names:
            if "/" not in name:
                if name.casefold() == actor.casefold():
                    return True
                continue
            if is_member is None:
                continue
            if name not in member_cache:
                member_cache[name] = is_member(name, actor)
            if member_cache[name]:
                return True
        return False

    for obj in objects:
        rule = approvers.get(obj.target)
        if rule is None:
            mine.append(obj)
            continue
        if rule == CODEOWNERS:
            names = owners.owners_of(obj.path) if owners is not None else ()
            source: str | None = owners.path if owners is not None else ""
            problem = owners.problem if owners is not None else None
        else:
            names, source, problem = tuple(rule), None, None
        if admits(names):
            mine.append(obj)
        else:
            not_mine.append(NotYours(obj, tuple(names), source, problem))
    return Split(tuple(mine), tuple(not_mine))
