"""The content gate for one target: documents, identity, kustomizations, SOPS, types, placement.

Pure: it works on facts already extracted from the target's files (see :mod:`bot.gate.run`),
the type registry and the structural result; it reads nothing itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.gate.codes import IssueCode
from bot.gate.content.build_fixes import (
    duplicate_fix,
    unsupported_fix,
    unsupported_message,
    with_input_fix,
)
from bot.gate.content.builds import Builds
from bot.gate.content.context import TargetContext
from bot.gate.content.facts import DocKind, FileFacts, ObjectFacts
from bot.gate.content.identity import Identity, object_identity
from bot.gate.content.names import LABEL, namespace_problem, suggest
from bot.gate.content.object_checks import invalid_name_issues, plaintext_issues
from bot.gate.content.placement import placement_path
from bot.gate.content.references import ReferenceInput, reference_issues
from bot.gate.content.type_fixes import not_followable_fix
from bot.gate.fixes import (
    rename_fix,
    sops_reencrypt_command,
)
from bot.gate.policy import TargetPolicy
from bot.gate.report import Issue, ManagedObject
from bot.gate.structural import StructuralResult
from bot.ignore.rules import IGNORE_FILE
from bot.paths import display_path, join, relative_to
from bot.registry.followability import Reason, TypeRecord, gv_string
from bot.registry.registry import TypeRegistry

_NOT_OBJECTS = (DocKind.NON_KRM, DocKind.INVALID)


@dataclass(frozen=True, slots=True)
class ContentInput:
    target: TargetPolicy
    structural: StructuralResult
    facts: Mapping[str, FileFacts]  # every managed YAML file and build directive that was read
    too_large: Mapping[str, int]  # files over the size limit (not read): path -> size
    context: TargetContext
    registry: TypeRegistry
    # Set when the target's capabilities file cannot be used: every type is then unknown.
    catalog_error: str | None = None
    ignored_facts: Mapping[str, FileFacts] = field(default_factory=dict)
    max_bytes: int = 0


@dataclass(slots=True)
class _Managed:
    """Managed objects seen so far: identity -> where, placement path -> identity."""

    registry: TypeRegistry
    builds: Builds  # what the kustomizations build: which of two copies kustomize never builds
    where: dict[Identity, tuple[str, int]] = field(default_factory=dict)
    placements: dict[str, Identity] = field(default_factory=dict)
    records: dict[tuple[str, str, str], TypeRecord] = field(default_factory=dict)
    objects: list[ManagedObject] = field(default_factory=list)

    def record(self, obj: ObjectFacts) -> TypeRecord:
        key = (obj.group, obj.version, obj.kind)
        found = self.records.get(key)
        if found is None:
            found = self.records[key] = self.registry.resolve(*key)
        return found


@dataclass(frozen=True, slots=True)
class ContentResult:
    issues: list[Issue]
    managed: tuple[ManagedObject, ...]  # each identity once, where it is first defined
    # The structural issues, with the fixes only the content knows (a foreign file that a
    # kustomization reads must not be removed first).
    structural_issues: tuple[Issue, ...]


def check_content(inp: ContentInput) -> ContentResult:
    issues: list[Issue] = []
    report = inp.structural.report
    builds = Builds.of(inp.target.path, report.build_directives, inp.facts, inp.structural.files)
    managed = _Managed(inp.registry, builds)
    for path, size in inp.too_large.items():
        issues.append(
            Issue.of(
                IssueCode.FILE_TOO_LARGE,
                path,
                f"{size} bytes, over the {inp.max_bytes} byte limit; the file is not read",
            )
        )
    outside: dict[str, list[str]] = {}
    for path, feature in inp.context.outside:
        outside.setdefault(path, []).append(feature)
    for path in inp.structural.report.build_directives:
        if path in inp.facts:
            issues.extend(_kustomization(path, inp.facts[path], outside.get(path, []), builds))
    issues.extend(
        reference_issues(
            ReferenceInput(
                inp.target.path,
                inp.context,
                inp.structural.report.build_directives,
                inp.structural.files,
                inp.structural.matcher,
            )
        )
    )
    for path in inp.structural.report.yaml_files:
        if path in inp.facts and path not in inp.context.context_files:
            issues.extend(_managed_file(path, inp.facts[path], inp, managed))
    issues.extend(_ignored_files(inp, managed))
    structural = [with_input_fix(i, builds) for i in report.issues]
    issues = [with_input_fix(i, builds) for i in issues]
    return ContentResult(issues, tuple(managed.objects), tuple(structural))


def _kustomization(path: str, facts: FileFacts, outside: list[str], builds: Builds) -> list[Issue]:
    """One ``unsupported-kustomize`` issue per file, listing every feature code it uses."""
    issues: list[Issue] = []
    invalid = next((d for d in facts.documents if d.kind is DocKind.INVALID), None)
    if invalid is not None:
        message = f"uses unparseable: {invalid.message}"
        fix = unsupported_fix(path, ["unparseable"], None, builds)
        return [
            Issue.of(IssueCode.UNSUPPORTED_KUSTOMIZE, path, message, line=invalid.line, fix=fix)
        ]
    kust = facts.kustomization
    if kust is not None and kust.namespace is not None:
        why = namespace_problem(kust.namespace)
        if why is not None:
            line = kust.namespace_line or None
            fix = rename_fix("namespace", suggest(kust.namespace, LABEL))
            issues.append(Issue.of(IssueCode.INVALID_NAME, path, why, line=line, fix=fix))
    features = sorted({*(kust.features if kust is not None else ()), *outside})
    if features:
        issues.append(
            Issue.of(
                IssueCode.UNSUPPORTED_KUSTOMIZE,
                path,
                unsupported_message(features, kust),
                line=facts.documents[0].line if facts.documents else None,
                fix=unsupported_fix(path, features, kust, builds),
            )
        )
    for index, doc in enumerate(facts.documents):
        if doc.obj is None or (index == 0 and kust is not None):
            continue
        obj = doc.obj
        issues.append(
            Issue.of(
                IssueCode.MIXED_MANAGED_ALLOWLISTED,
                path,
                f"{obj.kind} '{obj.name}' is a managed object inside a kustomization file; "
                "move it into its own file",
                line=doc.line,
            )
        )
    return issues


def _managed_file(path: str, facts: FileFacts, inp: ContentInput, managed: _Managed) -> list[Issue]:
    if facts.is_empty:
        return []  # an empty or comment-only file is nothing at all
    objects = facts.objects
    # Empty and comment-only documents (a trailing `---`) are nothing: kustomize and kubectl
    # build every object of the file, so they neither make it impure nor count as content.
    others = [d for d in facts.documents if d.kind in _NOT_OBJECTS]
    if not objects:
        invalid = next((d for d in others if d.kind is DocKind.INVALID), None)
        if invalid is not None:
            return [
                Issue.of(IssueCode.INVALID_YAML, path, invalid.message or "", line=invalid.line)
            ]
        first = next(d for d in others if d.kind is DocKind.NON_KRM)
        message = f"not a Kubernetes object ({first.message}): apiVersion, kind and metadata.name"
        return [Issue.of(IssueCode.NON_KRM_YAML, path, message + " are required", line=first.line)]
    issues: list[Issue] = []
    if others:
        bad = others[0]
        what = {
            DocKind.NON_KRM: "a non-KRM",
            DocKind.INVALID: "an invalid",
        }
        detail = f" ({bad.message})" if bad.message else ""
        issues.append(
            Issue.of(
                IssueCode.IMPURE_MANAGED_FILE,
                path,
                f"holds managed objects and {what[bad.kind]} document{detail}; "
                f"{len(others)} such document(s) in all",
                line=bad.line,
            )
        )
    for doc, obj in objects:
        issues.extend(_object(path, doc.line, obj, inp, managed))
    return issues


def _object(
    path: str, line: int, obj: ObjectFacts, inp: ContentInput, managed: _Managed
) -> list[Issue]:
    if obj.sops and obj.identity_encrypted:
        return [
            Issue.of(
                IssueCode.NON_KRM_YAML,
                path,
                "SOPS-encrypted document whose apiVersion, kind or metadata is itself encrypted "
                "cannot claim an identity; encrypt only the data (e.g. encrypted_regex: "
                "^(data|stringData)$)",
                line=line,
                fix="Decrypt the file and encrypt only its data again: "
                + sops_reencrypt_command(path),
            )
        ]
    issues: list[Issue] = []
    record = managed.record(obj)
    issues.extend(plaintext_issues(path, line, obj, record))
    shown_type = f"{gv_string(obj.group, obj.version)} {obj.kind}"
    if inp.catalog_error is not None:
        summary = f"{shown_type}: not followable — catalog-unavailable: {inp.catalog_error}"
        fix = not_followable_fix(
            Reason.CATALOG_UNAVAILABLE, shown_type, inp.target, path, managed.builds
        )
        issues.append(
            Issue.of(
                IssueCode.NOT_FOLLOWABLE, path, summary, line=line, fix=fix, subject=shown_type
            )
        )
        return issues
    if not record.followable:
        failing = record.failing
        reason = failing.reason if failing else None
        fix = not_followable_fix(reason, shown_type, inp.target, path, managed.builds)
        message = f"{shown_type}: {record.summary}"
        issues.append(
            Issue.of(
                IssueCode.NOT_FOLLOWABLE, path, message, line=line, fix=fix, subject=shown_type
            )
        )
    identity = _identity(path, obj, record, inp)
    refused = invalid_name_issues(path, obj, identity, record)
    if refused:
        issues.extend(refused)
        return issues  # the API server refuses the object: nothing the operator could mirror
    first = managed.where.get(identity)
    if first is not None:
        where = f"{display_path(first[0])}:{first[1]}"
        issues.append(
            Issue.of(
                IssueCode.DUPLICATE_IDENTITY,
                path,
                f"{obj.kind} {_shown_identity(identity)} is already defined at {where}",
                line=line,
                fix=duplicate_fix(path, first[0], inp.facts, managed.builds),
            )
        )
        return issues
    managed.where[identity] = (path, line)
    managed.objects.append(ManagedObject(identity, path, line, obj.digest))
    if record.followable and record.resource:
        placement = placement_path(
            inp.target.placement,
            group=obj.group,
            version=obj.version,
            resource=record.resource,
            namespace=identity[2],
            name=identity[3],
            namespaced=record.namespaced,
            sensitive=record.sensitive,
        )
        managed.placements[placement] = identity
        rule = inp.structural.matcher.rule_for(placement)
        if rule is not None:
            written = display_path(join(inp.target.path, placement))
            issues.append(
                Issue.of(
                    IssueCode.IGNORE_SHADOWS_MANAGED,
                    join(inp.target.path, IGNORE_FILE),
                    f"pattern '{display_path(rule.pattern)}' matches {written}, where the "
                    f"operator writes {obj.kind} {_shown_identity(identity)}",
                    line=rule.line,
                    pattern=rule.pattern,
                )
            )
    return issues


def _identity(path: str, obj: ObjectFacts, record: TypeRecord, inp: ContentInput) -> Identity:
    return object_identity(path, obj, record.scope, inp.context.namespaces)


def _shown_identity(identity: Identity) -> str:
    _, _, namespace, name = identity
    return f"{namespace}/{name}" if namespace else name


def _ignored_files(inp: ContentInput, managed: _Managed) -> list[Issue]:
    """Warn when an ignored YAML file holds a managed object or sits on a placement path."""
    issues: list[Issue] = []
    for path, facts in inp.ignored_facts.items():
        rel = relative_to(path, inp.target.path)
        on_placement = managed.placements.get(rel)
        if on_placement is not None:
            issues.append(
                Issue.of(
                    IssueCode.IGNORED_MANAGED_OBJECT,
                    path,
                    f"ignored, but it is where the operator writes {on_placement[1]} "
                    f"{_shown_identity(on_placement)}",
                )
            )
            continue
        for doc, obj in facts.objects:
            record = managed.record(obj)
            identity = _identity(path, obj, record, inp)
            first = managed.where.get(identity)
            if first is not None:
                issues.append(
                    Issue.of(
                        IssueCode.IGNORED_MANAGED_OBJECT,
                        path,
                        f"ignored, but it holds {obj.kind} {_shown_identity(identity)}, which is "
                        f"managed at {display_path(first[0])}:{first[1]}",
                        line=doc.line,
                    )
                )
                break
    return issues
