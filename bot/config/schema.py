"""``.ichor.yaml``: typed models and a loader that turns every problem into a ConfigIssue.

The file comes from the repository, so it is untrusted: it is size-bounded, parsed with the
safe loader, bounded in how far aliases expand, and validated strictly (unknown keys and wrong
types are issues, never silently coerced). Cross-target rules (unique names, non-overlapping
paths, capabilities outside every target) are checked once each target is valid on its own.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)
from pydantic_core import PydanticCustomError

from bot.config.fields import field_path, repeated_fields
from bot.config.messages import did_you_mean, line_of, plain_message
from bot.config.paths import check_placement, normalize_repo_path
from bot.gate.policy import CONFIG_FILE, DEFAULT_PLACEMENT, GatePolicy, TargetPolicy
from bot.gate.report import ConfigIssue
from bot.git.snapshot import EntryKind, Snapshot
from bot.paths import is_within

MAX_CONFIG_BYTES = 1 << 20
# Values visited while walking the loaded document; aliases count each time they are reached.
MAX_CONFIG_VALUES = 100_000
TARGET_NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"


def _make_repr() -> reprlib.Repr:
    short = reprlib.Repr()  # keyword arguments need Python 3.12
    short.maxstring = short.maxother = 60
    short.maxlist = short.maxdict = 4
    short.maxlevel = 2
    return short


_short = _make_repr()


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


FieldPath = Annotated[str, Field(min_length=1), AfterValidator(field_path)]


class Approval(_Model):
    kind: str = Field(min_length=1)
    field: FieldPath
    reasonField: FieldPath | None = None  # /reject's reason, or who approved
    fields: list[FieldPath] | None = None  # what field=value of /approve may also set
    newFilePath: str | None = None

    @field_validator("newFilePath")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return None if value is None else _as_path(value)


class Target(_Model):
    name: str
    path: str
    mode: Literal["relaxed", "strict"] = "relaxed"
    placement: str = DEFAULT_PLACEMENT
    capabilities: str | None = None
    approval: Approval | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not re.fullmatch(TARGET_NAME_PATTERN, value):
            raise PydanticCustomError(
                "invalid-target-name",
                "must be 1-63 characters of [a-z0-9-], starting and ending with a letter or digit",
            )
        return value

    @field_validator("path")
    @classmethod
    def _path(cls, value: str) -> str:
        return _as_path(value)

    @field_validator("capabilities")
    @classmethod
    def _capabilities(cls, value: str | None) -> str | None:
        if value is None:
            return None
        path = _as_path(value)
        if path == "":
            raise PydanticCustomError("invalid-path", "must name a file, not the repository root")
        return path

    @field_validator("placement")
    @classmethod
    def _placement(cls, value: str) -> str:
        try:
            return check_placement(value)
        except ValueError as exc:
            raise PydanticCustomError("invalid-placement", str(exc)) from None


class Commands(_Model):
    min_permission: Literal["read", "triage", "write", "maintain", "admin"] = "write"
    allow_author_approval: bool = False  # may a PR's author /approve its own new objects


class IchorConfig(_Model):
    version: Literal[1]
    targets: list[Target] = Field(min_length=1)
    commands: Commands = Commands()

    def gate_policy(self) -> GatePolicy:
        return GatePolicy(
            tuple(
                TargetPolicy(
                    t.name, t.path, placement=t.placement, capabilities=t.capabilities, mode=t.mode
                )
                for t in self.targets
            )
        )


def _as_path(value: str) -> str:
    try:
        return normalize_repo_path(value)
    except ValueError as exc:
        raise PydanticCustomError("invalid-path", str(exc)) from None


_KEYS: dict[str, tuple[str, ...]] = {
    "root": tuple(IchorConfig.model_fields),
    "target": tuple(Target.model_fields),
    "approval": tuple(Approval.model_fields),
    "commands": tuple(Commands.model_fields),
}


@dataclass(frozen=True, slots=True)
class ConfigResult:
    """``config`` is set only when there are no issues; ``present`` says whether a file exists."""

    present: bool
    config: IchorConfig | None
    issues: tuple[ConfigIssue, ...]


def load_config(snapshot: Snapshot) -> ConfigResult:
    entry = snapshot.get(CONFIG_FILE)
    if entry is None:
        return ConfigResult(False, None, ())
    if entry.kind is not EntryKind.FILE:
        return _failed("invalid-file", f"{CONFIG_FILE} must be a regular file, not a {entry.kind}")
    if entry.size > MAX_CONFIG_BYTES:
        return _failed(
            "file-too-large",
            f"{CONFIG_FILE} is {entry.size} bytes; the limit is {MAX_CONFIG_BYTES}",
        )
    return parse_config(entry.read())


def parse_config(data: bytes) -> ConfigResult:
    try:
        document = yaml.load(data, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        where = f"line {line}: " if line else ""
        issue = ConfigIssue("invalid-yaml", f"{where}{exc.problem or exc}", line=line)
        return ConfigResult(True, None, (issue,))
    except (yaml.YAMLError, ValueError) as exc:
        return _failed("invalid-yaml", str(exc).splitlines()[0])
    except RecursionError:
        return _failed("invalid-yaml", "the document is nested too deeply")
    if not isinstance(document, Mapping):
        return _failed(
            "invalid-value",
            "the file must be a mapping with the keys 'version' and 'targets'",
        )
    if _too_big(document):
        return _failed("invalid-value", "the document expands to too many values (aliases?)")
    try:
        config = IchorConfig.model_validate(document)
    except ValidationError as exc:
        root = _compose(data)
        return ConfigResult(True, None, tuple(_from_error(e, root) for e in exc.errors()))
    root = _compose(data)
    issues = cross_target_issues(config, root) + approval_field_issues(config, root)
    return ConfigResult(True, None if issues else config, issues)


def cross_target_issues(
    config: IchorConfig, root: yaml.Node | None = None
) -> tuple[ConfigIssue, ...]:
    """Rules across targets; ``root`` (the composed document) gives each issue its line."""
    issues: list[ConfigIssue] = []
    targets = config.targets
    for j, later in enumerate(targets):
        for i in range(j):
            earlier = targets[i]
            if later.name == earlier.name:
                issues.append(
                    ConfigIssue(
                        "duplicate-target-name",
                        f"targets[{j}].name: '{later.name}' is already the name of targets[{i}]",
                        line=line_of(root, ("targets", j, "name")),
                    )
                )
            if is_within(later.path, earlier.path) or is_within(earlier.path, later.path):
                issues.append(
                    ConfigIssue(
                        "overlapping-target-paths",
                        f"targets[{j}].path: '{_shown(later.path)}' (target '{later.name}') "
                        f"{_relation(later.path, earlier.path)} targets[{i}].path "
                        f"'{_shown(earlier.path)}' (target '{earlier.name}'); one directory "
                        "can belong to one target only",
                        line=line_of(root, ("targets", j, "path")),
                    )
                )
    for j, target in enumerate(targets):
        if target.capabilities is None:
            continue
        for owner in targets:
            if is_within(target.capabilities, owner.path):
                issues.append(
                    ConfigIssue(
                        "capabilities-inside-target",
                        f"targets[{j}].capabilities: '{target.capabilities}' is inside the path "
                        f"'{_shown(owner.path)}' of target '{owner.name}'; keep it outside every "
                        "target path",
                        line=line_of(root, ("targets", j, "capabilities")),
                    )
                )
    return tuple(issues)


def approval_field_issues(
    config: IchorConfig, root: yaml.Node | None = None
) -> tuple[ConfigIssue, ...]:
    """Each field an approval PR writes is named once (:func:`repeated_fields`)."""
    return tuple(
        issue
        for j, t in enumerate(config.targets)
        if t.approval is not None
        for issue in repeated_fields(
            j, t.approval.field, t.approval.reasonField, t.approval.fields or (), root
        )
    )


def _relation(path: str, other: str) -> str:
    if path == other:
        return "is the same path as"
    return "is inside" if is_within(path, other) else "contains"


def _shown(path: str) -> str:
    return path or "."


def _failed(kind: str, message: str) -> ConfigResult:
    return ConfigResult(True, None, (ConfigIssue(kind, message),))


def _location(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _allowed_keys(parent: tuple[int | str, ...]) -> tuple[str, ...]:
    shape = tuple("#" if isinstance(p, int) else p for p in parent)
    kind = {(): "root", ("targets", "#"): "target", ("targets", "#", "approval"): "approval"}.get(
        shape, "commands" if shape == ("commands",) else ""
    )
    return _KEYS.get(kind, ())


def _compose(data: bytes) -> yaml.Node | None:
    """The node tree, for line numbers; aliases stay shared nodes, so this is linear."""
    try:
        node: yaml.Node | None = yaml.compose(data, Loader=_StrictLoader)
    except (yaml.YAMLError, ValueError, RecursionError):
        return None
    return node


def _from_error(error: Any, root: yaml.Node | None) -> ConfigIssue:
    loc: tuple[int | str, ...] = tuple(error["loc"])
    where = _location(loc)
    kind: str = error["type"]
    line = line_of(root, loc)
    if kind == "extra_forbidden":
        allowed = _allowed_keys(loc[:-1])
        hint = did_you_mean(loc[-1] if loc else None, allowed)
        return ConfigIssue(
            "unknown-key",
            f"{where}: unknown key{hint} (allowed keys: {', '.join(allowed)})",
            line=line,
        )
    if kind == "missing":
        return ConfigIssue("missing-key", f"{where}: required key is missing", line=line)
    message = plain_message(kind, str(error["msg"]), error.get("ctx"))
    value = _short.repr(error.get("input"))
    if kind.startswith(("invalid-",)):
        return ConfigIssue(kind, f"{where}: {value} {message}", line=line)
    return ConfigIssue("invalid-value", f"{where}: {value} {message}", line=line)


def _too_big(document: object) -> bool:
    budget = MAX_CONFIG_VALUES
    stack = [document]
    while stack:
        value = stack.pop()
        budget -= 1
        if budget < 0:
            return True
        if isinstance(value, Mapping):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


class _StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader, refusing a key written twice in one mapping (YAML says it is an error)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key '{key}' appears twice in one mapping", key_node.start_mark
                )
            if isinstance(key, str):
                seen.add(key)
        result: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return result
