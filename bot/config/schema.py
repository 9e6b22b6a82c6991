"""``.ichor.yaml``: typed models and a loader that turns every problem into a ConfigIssue.

The file comes from the repository, so it is untrusted: it is size-bounded, parsed with the
safe loader, bounded in how far aliases expand, and validated strictly (unknown keys and wrong
types are issues, never silently coerced). Every problem is reported in one run: a key written
twice is found on the node tree, so the rest is still validated; the schema reports every bad
field; and the rules across targets (:mod:`bot.config.across`) run on every value that could
be read.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_origin

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from bot.config import values
from bot.config.across import approval_field_issues, cross_target_issues, read_targets
from bot.config.fields import field_path
from bot.config.messages import did_you_mean, line_of, plain_message
from bot.config.values import TARGET_NAME_PATTERN as TARGET_NAME_PATTERN  # read here by others
from bot.gate.policy import CONFIG_FILE, DEFAULT_PLACEMENT, Enforce, GatePolicy, TargetPolicy
from bot.gate.report import ConfigIssue
from bot.git.snapshot import EntryKind, Snapshot

MAX_CONFIG_BYTES = 1 << 20
# Values visited while walking the loaded document; aliases count each time they are reached.
MAX_CONFIG_VALUES = 100_000


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
# One check per value, shared with the rules across targets (bot.config.values).
RepoPath = Annotated[str, AfterValidator(values.repo_path)]


class Approval(_Model):
    kind: str = Field(min_length=1)
    field: FieldPath
    reasonField: FieldPath | None = None  # /reject's reason, or who approved
    fields: list[FieldPath] | None = None  # what field=value of /approve may also set
    newFilePath: RepoPath | None = None


class Target(_Model):
    name: Annotated[str, AfterValidator(values.target_name)]
    path: RepoPath
    mode: Literal["relaxed", "strict"] = "relaxed"
    placement: Annotated[str, AfterValidator(values.placement)] = DEFAULT_PLACEMENT
    capabilities: Annotated[str, AfterValidator(values.capabilities_path)] | None = None
    enforce: Enforce = "all"  # new: a pull request fails only for the issues it introduces
    approval: Approval | None = None
    # Who may /approve this target's new objects (design.md 5.1): users and teams, or
    # "codeowners"; unset, anyone the permission check lets through.
    approvers: Annotated[str | list[str], AfterValidator(values.approvers)] | None = None


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
                    t.name,
                    t.path,
                    placement=t.placement,
                    capabilities=t.capabilities,
                    mode=t.mode,
                    enforce=t.enforce,
                )
                for t in self.targets
            )
        )


_MODELS: dict[str, type[_Model]] = {
    "root": IchorConfig,
    "target": Target,
    "approval": Approval,
    "commands": Commands,
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
        document = yaml.load(data, Loader=_SAFE_LOADER)  # noqa: S506 - the safe loader
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
    root = _compose(data)
    issues = _keys_written_twice(root)
    config: IchorConfig | None = None
    try:
        config = IchorConfig.model_validate(document)
    except ValidationError as exc:
        issues.extend(_from_error(e, root) for e in exc.errors())
    targets = read_targets(document)
    issues += cross_target_issues(targets, root) + approval_field_issues(targets, root)
    # In the file's order, as a compiler lists them (stable: one line keeps the rules' order).
    issues.sort(key=lambda issue: issue.line or 0)
    return ConfigResult(True, None if issues else config, tuple(issues))


def _failed(kind: str, message: str) -> ConfigResult:
    return ConfigResult(True, None, (ConfigIssue(kind, message),))


def _location(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _model_at(parent: tuple[int | str, ...]) -> type[_Model] | None:
    shape = tuple("#" if isinstance(p, int) else p for p in parent)
    kind = {(): "root", ("targets", "#"): "target", ("targets", "#", "approval"): "approval"}.get(
        shape, "commands" if shape == ("commands",) else ""
    )
    return _MODELS.get(kind)


def _allowed_keys(parent: tuple[int | str, ...]) -> tuple[str, ...]:
    model = _model_at(parent)
    return tuple(model.model_fields) if model is not None else ()


def _choices(loc: tuple[int | str, ...]) -> tuple[str, ...]:
    """The words a key allows when it allows only a few (``mode``, ``enforce``): what a near
    miss is matched against, as an unknown key is against the allowed keys."""
    model = _model_at(loc[:-1]) if loc else None
    field = model.model_fields.get(str(loc[-1])) if model is not None else None
    if field is None or get_origin(field.annotation) is not Literal:
        return ()
    return tuple(word for word in get_args(field.annotation) if isinstance(word, str))


def _compose(data: bytes) -> yaml.Node | None:
    """The node tree, for line numbers; aliases stay shared nodes, so this is linear."""
    try:
        node: yaml.Node | None = yaml.compose(data, Loader=_SAFE_LOADER)
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
    hint = did_you_mean(error.get("input"), _choices(loc)) if kind == "literal_error" else ""
    return ConfigIssue("invalid-value", f"{where}: {value} {message}{hint}", line=line)


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


def _keys_written_twice(root: yaml.Node | None) -> list[ConfigIssue]:
    """A key twice in one mapping: YAML calls it an error, and the loader keeps the last
    value. It is found on the node tree, so the rest of the file is still validated."""
    issues: list[ConfigIssue] = []
    stack = [] if root is None else [root]
    visited: set[int] = set()  # an alias is the node it names: each node is walked once
    while stack:
        node = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag == _STR_TAG:
                    if key.value in keys:
                        line = key.start_mark.line + 1
                        issues.append(
                            ConfigIssue(
                                "invalid-yaml",
                                f"line {line}: key '{key.value}' appears twice in one mapping",
                                line=line,
                            )
                        )
                    keys.add(key.value)
                stack += (key, value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return sorted(issues, key=lambda issue: issue.line or 0)


_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR_TAG = "tag:yaml.org,2002:str"
