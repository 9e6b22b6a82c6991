"""The checks of one target's own values (name, paths, placement). Pure.

They are plain functions rather than model methods so that the rules across targets can read
each value on its own (:mod:`bot.config.across`): a target whose mode is wrong still has a
name and a path that the other rules must see.
"""

from __future__ import annotations

import re

from pydantic_core import PydanticCustomError

from bot.config.paths import check_placement, normalize_repo_path

TARGET_NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"


def target_name(value: str) -> str:
    if not re.fullmatch(TARGET_NAME_PATTERN, value):
        raise PydanticCustomError(
            "invalid-target-name",
            "must be 1-63 characters of [a-z0-9-], starting and ending with a letter or digit",
        )
    return value


def repo_path(value: str) -> str:
    try:
        return normalize_repo_path(value)
    except ValueError as exc:
        raise PydanticCustomError("invalid-path", str(exc)) from None


def capabilities_path(value: str) -> str:
    path = repo_path(value)
    if path == "":
        raise PydanticCustomError("invalid-path", "must name a file, not the repository root")
    return path


def placement(value: str) -> str:
    try:
        return check_placement(value)
    except ValueError as exc:
        raise PydanticCustomError("invalid-placement", str(exc)) from None


# A login (GitHub, GitLab, Gitea), or a team: org/team on GitHub and Gitea, a group path on
# GitLab (group/subgroup/...). A leading @ is allowed, as CODEOWNERS writes them.
_APPROVER = re.compile(r"@?[A-Za-z0-9][A-Za-z0-9._-]{0,99}(/[A-Za-z0-9][A-Za-z0-9._-]{0,99}){0,20}")
MAX_APPROVERS = 100


def approvers(value: str | list[str]) -> str | list[str]:
    """``codeowners``, or the users and teams who may approve (without their ``@``)."""
    if isinstance(value, str):
        if value != "codeowners":
            raise PydanticCustomError(
                "invalid-approvers",
                "must be a list of users and teams (org/team), or codeowners",
            )
        return value
    if not value or len(value) > MAX_APPROVERS:
        raise PydanticCustomError(
            "invalid-approvers", f"must name 1 to {MAX_APPROVERS} users or teams"
        )
    for name in value:
        if not _APPROVER.fullmatch(name):
            raise PydanticCustomError(
                "invalid-approvers",
                "each must be a user or a team (org/team, group/subgroup), not {name}",
                {"name": name[:100]},
            )
    return list(dict.fromkeys(name.removeprefix("@") for name in value))
