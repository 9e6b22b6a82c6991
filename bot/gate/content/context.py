"""Context a target's files give each other: effective namespaces and build-context files.

A kustomization's ``namespace`` applies to every object its ``resources`` graph reaches,
through files and through directories with their own kustomization; as in kustomize, the
outermost kustomization that sets a namespace wins. Files a kustomization names as patches,
and values files named by a Flux HelmRelease or an Argo CD Application, are build context:
they are read by a build, not applied, so they are not managed objects.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from bot.gate.content.facts import FileFacts
from bot.gate.content.kustomize import KustomizationFacts, resolve_reference


@dataclass(frozen=True, slots=True)
class Reference:
    """One ``resources`` or ``patches`` entry of a kustomization that stays inside the target."""

    kustomization: str
    line: int | None
    entry: str  # as written
    target: str  # the repo path it names
    patch: bool
    # What a resource reaches: the file, or the kustomization of the folder it names; None
    # when it reaches neither (checked by :mod:`bot.gate.content.references`).
    reached: str | None


@dataclass(frozen=True, slots=True)
class TargetContext:
    namespaces: Mapping[str, str]  # repo path of a file -> namespace its kustomization sets
    context_files: frozenset[str]  # patches and values files: build context, not managed
    # (kustomization path, feature) for references that leave the target.
    outside: tuple[tuple[str, str], ...]
    references: tuple[Reference, ...] = ()  # in kustomization and entry order


def _dirname(path: str) -> str:
    return posixpath.dirname(path)


def build_context(
    directives: Mapping[str, KustomizationFacts],
    facts: Mapping[str, FileFacts],
    known_files: Iterable[str],
    is_inside: Callable[[str], bool],
) -> TargetContext:
    """Context for one target. ``known_files`` is every file path of the target."""
    files = frozenset(known_files)
    kustomization_in: dict[str, str] = {}
    for path in sorted(directives):
        kustomization_in.setdefault(_dirname(path), path)

    children: dict[str, list[str]] = {}
    referenced: set[str] = set()
    context: set[str] = set()
    outside: list[tuple[str, str]] = []
    references: list[Reference] = []
    for path, kust in sorted(directives.items()):
        base = _dirname(path)
        kids: list[str] = []
        for index, resource in enumerate(kust.resources):
            target = resolve_reference(base, resource)
            if target is None or not is_inside(target):
                outside.append((path, "resource-outside-target"))
                continue
            reached: str | None = None
            if target in files:
                reached = target
            elif target in kustomization_in:
                reached = kustomization_in[target]
                referenced.add(reached)
            if reached is not None:
                kids.append(reached)
            line = _line(kust.resource_lines, index)
            references.append(Reference(path, line, resource, target, False, reached))
        children[path] = kids
        for index, patch in enumerate(kust.patch_paths):
            target = resolve_reference(base, patch)
            if target is None or not is_inside(target):
                outside.append((path, "patch-outside-target"))
            else:
                context.add(target)
                line = _line(kust.patch_lines, index)
                references.append(Reference(path, line, patch, target, True, None))

    namespaces: dict[str, str] = {}
    for root in sorted(p for p in directives if p not in referenced):
        _assign(root, directives, children, namespaces)

    for path, file_facts in facts.items():
        for _, obj in file_facts.objects:
            if not obj.values_files:
                continue
            bases = {_dirname(path), "", *obj.source_paths}
            for reference in obj.values_files:
                for base in bases:
                    target = resolve_reference(base, reference)
                    if target is not None and target in files:
                        context.add(target)
    return TargetContext(
        namespaces, frozenset(context), tuple(sorted(set(outside))), tuple(references)
    )


def _line(lines: tuple[int, ...], index: int) -> int | None:
    return lines[index] or None if index < len(lines) else None


def _assign(
    root: str,
    directives: Mapping[str, KustomizationFacts],
    children: Mapping[str, list[str]],
    namespaces: dict[str, str],
) -> None:
    """Depth first from ``root``, with a stack: a pull request may nest thousands deep."""
    seen: set[tuple[str, str | None]] = set()
    stack: list[tuple[str | None, Iterator[str]]] = []

    def enter(node: str, inherited: str | None) -> None:
        if (node, inherited) in seen:
            return  # a cycle, or a graph already walked with this namespace
        seen.add((node, inherited))
        effective = inherited or directives[node].namespace
        stack.append((effective, iter(children.get(node, ()))))

    enter(root, None)
    while stack:
        effective, kids = stack[-1]
        child = next(kids, None)
        if child is None:
            stack.pop()
        elif child in directives:
            enter(child, effective)
        elif effective is not None:
            namespaces.setdefault(child, effective)
