"""The fields an approval PR edits (``approval.field``, ``reasonField``, ``fields``): how
each is written, and that none is named twice. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence

import yaml
from pydantic_core import PydanticCustomError

from bot.config.messages import line_of
from bot.gate.report import ConfigIssue

# Dotted segments, as the YAML edit walks them: spec.approvalState.
FIELD_PATH_PATTERN = r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*"


def field_path(value: str) -> str:
    """The validator of one field path."""
    if not re.fullmatch(FIELD_PATH_PATTERN, value):
        raise PydanticCustomError(
            "invalid-field-path",
            "must be a dotted field path of [A-Za-z0-9_-] segments, e.g. spec.approvalState",
        )
    return value


def repeated_fields(
    index: int,
    field: str | None,
    reason_field: str | None,
    fields: Sequence[str | None],
    root: yaml.Node | None = None,
) -> list[ConfigIssue]:
    """Issues for target ``index``'s approval: ``reasonField`` and each entry of ``fields``
    differ from ``field`` (which ``/approve`` itself sets), and ``fields`` lists no field
    twice. None is a value that could not be read (its own issue): it is compared with
    nothing. ``root`` (the composed document) gives each issue its line."""
    where = f"targets[{index}].approval"
    loc: tuple[int | str, ...] = ("targets", index, "approval")
    issues: list[ConfigIssue] = []
    if reason_field is not None and reason_field == field:
        issues.append(
            ConfigIssue(
                "duplicate-approval-field",
                f"{where}.reasonField: '{reason_field}' is the approval field itself; the "
                "reason needs a field of its own",
                line=line_of(root, (*loc, "reasonField")),
            )
        )
    seen: dict[str, int] = {}
    for n, name in enumerate(fields):
        if name is None:
            continue
        if name == field:
            why = "is the approval field itself, which /approve sets"
        elif name in seen:
            why = f"is already {where}.fields[{seen[name]}]"
        else:
            seen[name] = n
            continue
        issues.append(
            ConfigIssue(
                "duplicate-approval-field",
                f"{where}.fields[{n}]: '{name}' {why}",
                line=line_of(root, (*loc, "fields", n)),
            )
        )
    return issues
