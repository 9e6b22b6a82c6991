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
