"""What a change request writes (design.md 5, 6), decided from the base branch alone: the
object located by identity, the fields it may set, the edited bytes, and the pull request's
title and impact. Pure: the engine reads the files, runs the gate on the result and pushes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from bot.changes.branch import change_branch, ignore_branch
from bot.changes.locate import Located, NotLocated, kind_matches, locate
from bot.changes.pr_body import FieldChange, Impact, ignore_title, object_title
from bot.changes.safety import anchored, ignore_pattern_problem
from bot.checks.markdown_text import inline_path, inline_text
from bot.config.schema import IchorConfig, Target
from bot.gate.content.identity import Identity, identity_text
from bot.gate.report import Report
from bot.ignore.rules import IGNORE_FILE
from bot.paths import join
from bot.yaml.documents import parse_yaml
from bot.yaml.edit import EditError, new_file, remove_document, set_or_add_leaf

# update: the allowed fields only, no decision (the change API's; comments have no /update).
ObjectVerb = Literal["approve", "reject", "update", "delete"]
Read = Callable[[str], bytes | None]  # a file at the base, None when there is none


@dataclass(frozen=True, slots=True)
class ObjectChange:
    verb: ObjectVerb
    namespace: str | None
    name: str
    requester: str
    # /delete names it; approve, reject and update use the target's approval kind, and an API
    # client that names one must name that kind.
    kind: str | None = None
    fields: tuple[tuple[str, str], ...] = ()
    reason: str = ""
    target: str | None = None


@dataclass(frozen=True, slots=True)
class IgnoreChange:
    pattern: str
    requester: str
    target: str | None = None
    pull_number: int = 0


@dataclass(frozen=True, slots=True)
class CreateChange:
    """The change API's strict ``create``: a new object's whole document, written to the
    target's ``approval.newFilePath/<name>.yaml``. The caller checked that it is an object
    (apiVersion, kind, metadata.name as strings)."""

    document: Mapping[str, object]
    requester: str
    target: str | None = None

    @property
    def kind(self) -> str:
        return str(self.document["kind"])

    @property
    def group(self) -> str:
        api_version = str(self.document["apiVersion"])
        return api_version.rpartition("/")[0] if "/" in api_version else ""

    @property
    def name(self) -> str:
        return str(_metadata(self.document).get("name"))

    @property
    def namespace(self) -> str | None:
        namespace = _metadata(self.document).get("namespace")
        return str(namespace) if namespace else None


def _metadata(document: Mapping[str, object]) -> Mapping[str, object]:
    metadata = document.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


@dataclass(frozen=True, slots=True)
class Planned:
    target: Target
    branch: str
    title: str
    summary: str
    changes: dict[str, bytes | None] = field(default_factory=dict)  # None: the file goes
    impact: Impact | None = None
    # The verb, the target and the object's whole identity, which its pull request's marker
    # names; None for an /ignore (its branch is its target and pull request alone).
    marker: tuple[str, str, Identity] | None = None


@dataclass(frozen=True, slots=True)
class Refused:
    """A usage error or a refusal, for the reply; nothing is written."""

    reason: str
    branch: str | None = None  # the change's branch, once the object is known


def _one_target(config: IchorConfig, named: str | None) -> Target | Refused:
    if named is not None:
        found = [t for t in config.targets if t.name == named]
        return found[0] if found else Refused(f"there is no target {named!r}")
    if len(config.targets) == 1:
        return config.targets[0]
    names = ", ".join(t.name for t in config.targets)
    return Refused(f"this repository has several targets ({names}): add `in <target>`")


def plan_object(
    change: ObjectChange, config: IchorConfig, base: Report, read: Read
) -> Planned | Refused:
    found = _find(change, config, base)
    if isinstance(found, Refused):
        return found
    target, located = found
    obj = located.object
    data = read(obj.path)
    if data is None:
        return Refused(f"{obj.path} is not on the base branch")
    document = _document_at(data, obj.line)
    if document is None:
        return Refused(f"{obj.path}: the object's document could not be read again")
    kind = obj.identity[1]
    title = object_title(change.verb, kind, change.namespace, change.name)
    branch = change_branch(change.verb, target.name, obj.identity)
    marker = (change.verb, target.name, obj.identity)
    try:
        if change.verb == "delete":
            edited = remove_document(data, document=document)
            verb = "removes the file" if edited is None else "removes the object's document"
            impact = Impact(target.name, (obj.shown,), (obj.path,), verdict="")
            summary = f"Deletes {_shown(kind, change)}: {verb}."
            return Planned(target, branch, title, summary, {obj.path: edited}, impact, marker)
        edits = _approval_edits(change, target)
        if isinstance(edits, Refused):
            return edits
        value = parse_yaml(data).documents[document].value
        changes: list[FieldChange] = []
        for path, new in edits:
            before = _leaf(value, path.split("."))
            data = set_or_add_leaf(data, document=document, path=path.split("."), value=new)
            changes.append(FieldChange(path, before, new))
    except EditError as exc:
        return Refused(f"{obj.path} cannot be edited: {exc}")
    impact = Impact(target.name, (obj.shown,), (obj.path,), tuple(changes), verdict="")
    if change.verb == "update":
        names = ", ".join(inline_text(c.path, 200) for c in changes)
        summary = f"Sets {names} on {_shown(kind, change)}."
    else:
        done = "approved" if change.verb == "approve" else "rejected"
        summary = f"Marks {_shown(kind, change)} as {done}."
    return Planned(target, branch, title, summary, {obj.path: data}, impact, marker)


def _find(
    change: ObjectChange, config: IchorConfig, base: Report
) -> tuple[Target, Located] | Refused:
    candidates = [t for t in config.targets if change.target in (None, t.name)]
    if change.target is not None and not candidates:
        return Refused(f"there is no target {change.target!r}")
    if change.verb != "delete":
        candidates = [t for t in candidates if t.approval is not None]
        if not candidates:
            return Refused(
                f"`/{change.verb} <ns>/<name>` needs a target with `approval` in .ichor.yaml"
            )
    found: list[tuple[Target, Located]] = []
    problems: list[str] = []
    for target in candidates:
        kind = change.kind if change.verb == "delete" else _approval_kind(target)
        if change.verb != "delete" and change.kind is not None:
            if kind is None or not _same_kind(change.kind, kind):
                problems.append(f"target {target.name} approves {kind}, not {change.kind}")
                continue
            kind = change.kind  # the narrower of the two when it names a group
        got = locate(
            base, kind=kind or "", namespace=change.namespace, name=change.name, target=target.name
        )
        if isinstance(got, NotLocated):
            problems.append(got.message)
        else:
            found.append((target, got))
    if len(found) == 1:
        return found[0]
    shown = f"{change.namespace or '_'}/{change.name}"
    if len(found) > 1:
        names = ", ".join(t.name for t, _ in found)
        return Refused(f"{shown} is in several targets ({names}): add `in <target>`")
    only = problems[0] if len(problems) == 1 else f"no managed object {shown} on the base branch"
    return Refused(only)


def _shown(kind: str, change: ObjectChange) -> str:
    return inline_text(f"{kind} {change.namespace or '_'}/{change.name}", 300)


def _approval_kind(target: Target) -> str | None:
    return target.approval.kind if target.approval is not None else None


def _same_kind(named: str, approved: str) -> bool:
    """``Deployment.apps`` and ``Deployment`` are one kind; ``Deployment.x`` and ``.apps`` not."""
    kind, _, group = named.partition(".")
    other, _, other_group = approved.partition(".")
    return kind == other and (not group or not other_group or group == other_group)


def _approval_edits(change: ObjectChange, target: Target) -> list[tuple[str, str]] | Refused:
    approval = target.approval
    assert approval is not None  # _find kept only targets with one
    edits: list[tuple[str, str]] = []
    if change.verb == "update":
        if not change.fields:
            return Refused("an update names no field to set")
    else:
        edits.append((approval.field, "approved" if change.verb == "approve" else "rejected"))
    allowed = approval.fields or []
    for written, value in change.fields:
        # `mode=canary` names `data.mode` when it is the one allowed field ending so.
        ends = [f for f in allowed if f == written or f.endswith("." + written)]
        name = ends[0] if len(ends) == 1 else written
        if name not in allowed:
            listed = ", ".join(allowed) or "none"
            return Refused(
                f"{name} is not among the fields target {target.name} lets /approve set "
                f"(`approval.fields`: {listed})"
            )
        edits.append((name, value))
    if approval.reasonField and change.verb != "update":
        if change.verb == "reject":
            reason = change.reason.strip() or f"rejected by {change.requester}"
        else:
            reason = f"approved by {change.requester}"
        edits.append((approval.reasonField, reason))
    return edits


def _document_at(data: bytes, line: int) -> int | None:
    for document in parse_yaml(data).documents:
        if document.line == line and document.error is None:
            return document.index
    return None


def _leaf(value: object, path: Sequence[str]) -> str | None:
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return None if value is None or isinstance(value, dict | list) else str(value)


def plan_create(
    change: CreateChange, config: IchorConfig, base: Report, read: Read
) -> Planned | Refused:
    """A new file at ``approval.newFilePath/<name>.yaml`` of the one strict target whose
    approval kind this is; an existing file there, or the object already managed, refuses."""
    kind, name, namespace = change.kind, change.name, change.namespace
    if not _SAFE_FILE_NAME.fullmatch(name) or name in (".", ".."):
        return Refused(f"{name!r} cannot name a file")
    named = [t for t in config.targets if change.target in (None, t.name)]
    if change.target is not None and not named:
        return Refused(f"there is no target {change.target!r}")
    candidates = [
        t
        for t in named
        if t.mode == "strict"
        and t.approval is not None
        and t.approval.newFilePath
        and kind_matches(t.approval.kind, change.group, kind)
    ]
    if not candidates:
        where = f"target {change.target}" if change.target else "no target"
        return Refused(
            f"{where} takes a create of {kind}: that needs a strict target whose `approval` "
            "names this kind and a `newFilePath`"
        )
    if len(candidates) > 1:
        names = ", ".join(t.name for t in candidates)
        return Refused(f"several targets take a create of {kind} ({names}): name the target")
    target = candidates[0]
    assert target.approval is not None and target.approval.newFilePath
    path = join(target.approval.newFilePath, f"{name}.yaml")
    identity = (change.group, kind, namespace or "", name)
    shown = identity_text(identity)
    for report_target in base.targets:
        for obj in report_target.managed:
            if obj.identity == identity:
                return Refused(f"{shown} is already managed, in {obj.path}")
    if read(path) is not None:
        return Refused(f"{path} already exists on the base branch")
    try:
        data = new_file(change.document)
    except EditError as exc:
        return Refused(f"the document cannot be written: {exc}")
    return Planned(
        target,
        change_branch("create", target.name, identity),
        object_title("create", kind, namespace, name),
        f"Creates {inline_text(shown, 300)} in {inline_path(path)}.",
        {path: data},
        Impact(target.name, (shown,), (path,), verdict=""),
        ("create", target.name, identity),
    )


# A Kubernetes name as one file name: no separator, nothing git or a shell would misread.
_SAFE_FILE_NAME = re.compile(r"[a-z0-9][a-z0-9.-]{0,252}")


BOOTSTRAP_IGNORE = """\
# .gittargetignore: files in this target that the operator does not own.
#
# Everything under this folder is mirrored into the cluster and owned by the operator,
# except what a line below matches. The lines follow .gitignore's rules, relative to this
# folder: a leading / anchors a pattern here, a trailing / names a folder, * and ** glob.
# Never ignore a managed object's file: the acceptance gate refuses a pattern that would.
"""


def plan_ignore(
    change: IgnoreChange, config: IchorConfig, base: Report, read: Read
) -> Planned | Refused:
    target = _one_target(config, change.target)
    if isinstance(target, Refused):
        return target
    path = join(target.path, IGNORE_FILE) if target.path not in ("", ".") else IGNORE_FILE
    existing_bytes = read(path)
    existing = existing_bytes.decode("utf-8", "replace") if existing_bytes is not None else None
    text = existing if existing is not None else BOOTSTRAP_IGNORE
    managed = [m.path for t in base.targets if t.name == target.name for m in t.managed]
    problem = ignore_pattern_problem(change.pattern, text, managed, target.path)
    if problem is not None:
        return Refused(problem)
    line = anchored(change.pattern)
    if line in text.splitlines():
        return Refused(f"{path} already has the line {line!r}")
    new = text + ("" if not text or text.endswith("\n") else "\n") + line + "\n"
    verb = "adds" if existing is not None else "creates it with"
    impact = Impact(target.name, (), (path,), (FieldChange(IGNORE_FILE, None, line),), "")
    return Planned(
        target,
        ignore_branch(target.name, change.pull_number),
        ignore_title(change.pattern, target.name),
        f"Ignores {inline_text(line, 300)} in target {inline_text(target.name, 100)}: {verb} "
        f"the line in {inline_path(path)}.",
        {path: new.encode()},
        impact,
    )
