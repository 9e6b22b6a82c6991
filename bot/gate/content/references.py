"""What kustomize itself refuses to build, and what it builds that the operator never reads.

``kubectl kustomize`` stops at a resource or patch file that does not exist, at a resource
folder without a kustomization file, at the same objects reached twice in one build (a diamond:
two overlays of one base under one kustomization, or an entry listed twice) or in a cycle, and
at a folder with more than one kustomization file. Each is ``invalid-kustomize`` at the
kustomization and the line of its entry. A file a kustomization renders or patches with that
the target's ignore file hides is ``ignore-shadows-managed``: kustomize builds it into the
output, yet the operator, which never reads an ignored file, cannot know it.

Pure and linear: each build (each kustomization no other one includes, then whatever only a
cycle reaches) is walked once with an explicit stack, never recursion.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from bot.gate.codes import IssueCode
from bot.gate.content.context import Reference, TargetContext
from bot.gate.report import Issue
from bot.ignore.rules import IGNORE_FILE, IgnoreMatcher
from bot.paths import basename, display_path, join, relative_to

KUSTOMIZATION_NAMES = "kustomization.yaml, kustomization.yml or Kustomization"


@dataclass(frozen=True, slots=True)
class ReferenceInput:
    target_path: str
    context: TargetContext
    directives: Collection[str]  # every build directive of the target, read or not
    files: Collection[str]  # every regular file under the target
    matcher: IgnoreMatcher


def reference_issues(inp: ReferenceInput) -> list[Issue]:
    issues = _folders_with_two_kustomizations(inp.directives)
    folders = frozenset(posixpath.dirname(p) for p in inp.directives)
    files = frozenset(inp.files)
    directories: frozenset[str] | None = None  # built only when a reference does not resolve
    for ref in inp.context.references:
        rule = inp.matcher.rule_for(relative_to(ref.target, inp.target_path))
        if rule is not None and (ref.patch or ref.reached == ref.target):
            issues.append(_ignored(inp.target_path, ref, rule.pattern, rule.line))
            continue
        if ref.patch:
            if ref.target not in files:
                issues.append(_invalid(ref, f"patch '{ref.entry}' names no file"))
            continue
        if ref.reached is not None or ref.target in folders:
            continue
        if directories is None:
            directories = _directories(files)
        if ref.target in directories:
            why = f"resource '{ref.entry}' is a folder without {KUSTOMIZATION_NAMES}"
        else:
            why = f"resource '{ref.entry}' names no file or folder"
        issues.append(_invalid(ref, why))
    issues.extend(_reached_twice(inp.context.references))
    return issues


def _invalid(ref: Reference, why: str) -> Issue:
    shown = display_path(ref.target)
    message = f"{why} ({shown}): kustomize refuses to build this kustomization"
    return Issue.of(IssueCode.INVALID_KUSTOMIZE, ref.kustomization, message, line=ref.line)


def _ignored(target_path: str, ref: Reference, pattern: str, line: int) -> Issue:
    what = "names as a patch" if ref.patch else "lists as a resource"
    field = "patches" if ref.patch else "resources"
    where = display_path(ref.kustomization) + (f":{ref.line}" if ref.line else "")
    message = (
        f"pattern '{display_path(pattern)}' hides {display_path(ref.target)}, which {where} "
        f"{what}: kustomize builds it, the operator never reads it"
    )
    fix = (
        f"Take '{ref.entry}' out of the {field} of {display_path(ref.kustomization)}, or stop "
        "ignoring the file: remove the pattern or narrow it."
    )
    ignore_file = join(target_path, IGNORE_FILE)
    return Issue.of(
        IssueCode.IGNORE_SHADOWS_MANAGED, ignore_file, message, line=line, pattern=pattern, fix=fix
    )


def _directories(files: Iterable[str]) -> frozenset[str]:
    found: set[str] = set()
    for path in files:
        parent = posixpath.dirname(path)
        while parent and parent not in found:
            found.add(parent)
            parent = posixpath.dirname(parent)
    return frozenset(found)


def _folders_with_two_kustomizations(directives: Collection[str]) -> list[Issue]:
    by_folder: dict[str, list[str]] = {}
    for path in directives:
        by_folder.setdefault(posixpath.dirname(path), []).append(path)
    issues: list[Issue] = []
    for paths in by_folder.values():
        if len(paths) < 2:
            continue
        first, *others = sorted(paths)
        for other in others:
            message = (
                f"{basename(other)} beside {basename(first)}: kustomize refuses a folder with "
                "more than one kustomization file"
            )
            fix = f"Keep one of them: merge {display_path(other)} into {display_path(first)}."
            issues.append(Issue.of(IssueCode.INVALID_KUSTOMIZE, other, message, fix=fix))
    return issues


def _reached_twice(references: Iterable[Reference]) -> list[Issue]:
    """Diamonds and cycles, each build walked once depth first with an explicit stack."""
    edges: dict[str, list[Reference]] = {}
    included: set[str] = set()  # kustomizations another one includes as a folder
    for ref in references:
        if ref.reached is None:
            continue
        edges.setdefault(ref.kustomization, []).append(ref)
        if ref.reached != ref.target:
            included.add(ref.reached)
    found: dict[tuple[str, int | None, str], Issue] = {}
    walked: set[str] = set()
    for root in sorted(k for k in edges if k not in included):
        _walk(root, edges, walked, found)
    for root in sorted(edges):
        if root not in walked:  # only a cycle reaches it: a build of its own
            _walk(root, edges, walked, found)
    return list(found.values())


def _walk(
    root: str,
    edges: Mapping[str, list[Reference]],
    walked: set[str],
    found: dict[tuple[str, int | None, str], Issue],
) -> None:
    first_seen: dict[str, Reference | None] = {root: None}
    on_stack: set[str] = {root}
    stack: list[tuple[str, int]] = [(root, 0)]
    walked.add(root)
    while stack:
        node, index = stack[-1]
        out = edges.get(node, ())
        if index == len(out):
            stack.pop()
            on_stack.discard(node)
            continue
        stack[-1] = (node, index + 1)
        ref = out[index]
        child = ref.reached
        assert child is not None
        if child in on_stack:
            why = (
                f"resource '{ref.entry}' leads back to {display_path(child)}, which includes "
                "this kustomization: kustomize refuses a cycle"
            )
        elif child in first_seen:
            earlier = first_seen[child]
            where = (
                f"{display_path(earlier.kustomization)}:{earlier.line}"
                if earlier is not None and earlier.line
                else display_path(earlier.kustomization if earlier else root)
            )
            why = (
                f"resource '{ref.entry}' reaches {display_path(child)} a second time in the "
                f"build of {display_path(root)} (first from {where}): kustomize refuses the "
                "same objects twice, and one file cannot be two objects"
            )
        else:
            first_seen[child] = ref
            walked.add(child)
            if child in edges:
                on_stack.add(child)
                stack.append((child, 0))
            continue
        key = (ref.kustomization, ref.line, ref.entry)
        found.setdefault(
            key, Issue.of(IssueCode.INVALID_KUSTOMIZE, ref.kustomization, why, line=ref.line)
        )
