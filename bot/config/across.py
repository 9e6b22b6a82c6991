"""The rules across targets, run on every value that could be read. Pure.

Unique names, non-overlapping paths and capabilities outside every target are checked on the
document itself, target by target and field by field, not on a validated model: a model exists
only when nothing is wrong, so a wrong ``mode`` would hide a duplicate name. A value that is
missing or is itself a problem (reported by the schema) takes part in no rule here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from bot.config import values
from bot.config.fields import field_path, repeated_fields
from bot.config.messages import line_of
from bot.gate.report import ConfigIssue
from bot.paths import is_within


@dataclass(frozen=True, slots=True)
class ApprovalValues:
    field: str | None
    reason_field: str | None
    fields: tuple[str | None, ...]  # one per entry, so an entry keeps its index in messages


@dataclass(frozen=True, slots=True)
class TargetValues:
    """What could be read of ``targets[index]``: each value as the schema would give it."""

    index: int
    name: str | None
    path: str | None
    capabilities: str | None
    approval: ApprovalValues | None


def read_targets(document: Mapping[Any, Any]) -> tuple[TargetValues, ...]:
    targets = document.get("targets")
    if not isinstance(targets, list):
        return ()
    return tuple(
        TargetValues(
            index,
            _read(item.get("name"), values.target_name),
            _read(item.get("path"), values.repo_path),
            _read(item.get("capabilities"), values.capabilities_path),
            _read_approval(item.get("approval")),
        )
        for index, item in enumerate(targets)
        if isinstance(item, Mapping)
    )


def _read(value: object, check: Callable[[str], str]) -> str | None:
    # Strict, as the schema is: only text is read, never a number or a list turned into text.
    if not isinstance(value, str):
        return None
    try:
        return check(value)
    except ValueError:  # the schema reports it (PydanticCustomError is a ValueError)
        return None


def _read_approval(value: object) -> ApprovalValues | None:
    if not isinstance(value, Mapping):
        return None
    fields = value.get("fields")
    return ApprovalValues(
        _read(value.get("field"), field_path),
        _read(value.get("reasonField"), field_path),
        tuple(_read(f, field_path) for f in fields) if isinstance(fields, list) else (),
    )


def cross_target_issues(
    targets: Sequence[TargetValues], root: yaml.Node | None = None
) -> list[ConfigIssue]:
    """``root`` (the composed document) gives each issue its line."""
    issues: list[ConfigIssue] = []
    for j, later in enumerate(targets):
        for earlier in targets[:j]:
            if later.name is not None and later.name == earlier.name:
                issues.append(
                    ConfigIssue(
                        "duplicate-target-name",
                        f"targets[{later.index}].name: '{later.name}' is already the name of "
                        f"targets[{earlier.index}]",
                        line=line_of(root, ("targets", later.index, "name")),
                    )
                )
            if later.path is None or earlier.path is None:
                continue
            if is_within(later.path, earlier.path) or is_within(earlier.path, later.path):
                issues.append(
                    ConfigIssue(
                        "overlapping-target-paths",
                        f"targets[{later.index}].path: '{_shown(later.path)}'{_named(later)} "
                        f"{_relation(later.path, earlier.path)} targets[{earlier.index}].path "
                        f"'{_shown(earlier.path)}'{_named(earlier)}; one directory can belong "
                        "to one target only",
                        line=line_of(root, ("targets", later.index, "path")),
                    )
                )
    for target in targets:
        if target.capabilities is None:
            continue
        for owner in targets:
            if owner.path is not None and is_within(target.capabilities, owner.path):
                whose = f"target '{owner.name}'" if owner.name else f"targets[{owner.index}]"
                issues.append(
                    ConfigIssue(
                        "capabilities-inside-target",
                        f"targets[{target.index}].capabilities: '{target.capabilities}' is "
                        f"inside the path '{_shown(owner.path)}' of {whose}; keep it outside "
                        "every target path",
                        line=line_of(root, ("targets", target.index, "capabilities")),
                    )
                )
    return issues


def approval_field_issues(
    targets: Sequence[TargetValues], root: yaml.Node | None = None
) -> list[ConfigIssue]:
    """Each field an approval PR writes is named once (:func:`repeated_fields`)."""
    return [
        issue
        for t in targets
        if t.approval is not None
        for issue in repeated_fields(
            t.index, t.approval.field, t.approval.reason_field, t.approval.fields, root
        )
    ]


def _named(target: TargetValues) -> str:
    return f" (target '{target.name}')" if target.name is not None else ""


def _relation(path: str, other: str) -> str:
    if path == other:
        return "is the same path as"
    return "is inside" if is_within(path, other) else "contains"


def _shown(path: str) -> str:
    return path or "."
