"""Fixes for what kustomize builds: each one, applied as written, leaves a build that works.

``git rm`` of a file a generator reads, or of the one copy of an object kustomize builds,
breaks the build; so does rendering a Component on its own. These fixes read the target's
kustomization graph (:mod:`bot.gate.content.builds`) to say what to change instead.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Mapping, Sequence

from bot.gate.codes import IssueCode
from bot.gate.content.builds import Builds
from bot.gate.content.facts import FileFacts
from bot.gate.content.kustomize import ACCEPTED_FIELDS, KustomizationFacts, near_misses
from bot.gate.fixes import git_rm_command, kustomize_render_command
from bot.gate.report import Issue
from bot.paths import display_path

# A render fix lists the files it frees up to this many; past it, the list is said in words
# (a fix must still fit where the forge shows it).
MAX_FREED_LISTED = 40
# Codes whose own fix removes, moves or ignores the file, or edits what it holds as if it were
# applied: for a file a refused field reads (a transformer's configuration), each would break
# the build that reads it.
_REMOVED_BY_DEFAULT = frozenset(
    {
        IssueCode.FOREIGN_FILE,
        IssueCode.NON_KRM_YAML,
        IssueCode.NOT_FOLLOWABLE,
        IssueCode.DUPLICATE_IDENTITY,
        IssueCode.INVALID_NAME,
    }
)


def unsupported_message(features: Sequence[str], kust: KustomizationFacts | None) -> str:
    """``uses resource (did you mean 'resources'?), helmCharts, outside the accepted set; ...``"""
    meant = near_misses(kust) if kust is not None else {}
    shown = ", ".join(f"{f} (did you mean '{meant[f]}'?)" if f in meant else f for f in features)
    # Keys kustomize does not know want editing, not the advice for a refused feature.
    advice = (
        ""
        if key_edits_only(features, kust)
        else "; render the result into plain objects or move the kustomization out of the target"
    )
    return f"uses {shown}, outside the accepted set{advice}"


def key_edits_only(features: Sequence[str], kust: KustomizationFacts | None) -> bool:
    """Every refused feature is a key kustomize has no field by, misspelling an accepted field
    or none: editing the keys is the whole fix, nothing needs rendering."""
    if kust is None:
        return False
    meant = near_misses(kust)
    unknown = set(kust.unknown_keys)
    return all(f in unknown and (f not in meant or meant[f] in ACCEPTED_FIELDS) for f in features)


def unsupported_fix(
    path: str, features: Sequence[str], kust: KustomizationFacts | None, builds: Builds
) -> str:
    """The fix for an ``unsupported-kustomize`` issue of the kustomization at ``path``."""
    shown = display_path(path)
    folder = display_path(posixpath.dirname(path) or ".")
    if "unparseable" in features:  # nothing renders it: kustomize cannot read it either
        return (
            f"Correct {shown} where kustomize cannot read it (`kubectl kustomize {folder}` "
            f"names the place), or move {folder} out of the target."
        )
    if "component" in features:  # kustomize builds a Component only inside its user
        users = ", ".join(display_path(u) for u in builds.listed_by(path))
        if not users:  # a Flux Kustomization's spec.components may use it from outside
            return (
                "No kustomization of the target lists this Component (in its components), so "
                "it is built elsewhere (a Flux Kustomization's spec.components) or not at all: "
                f"move {folder} out of the target, and the paths that name it with it."
            )
        return (
            f"A Component is built only as part of the kustomization that lists it ({users}): "
            f"render that one instead (its own fix does), or move {folder} out of the target."
        )
    edits = _key_edits(kust)
    if key_edits_only(features, kust):
        return f"In {shown}, {edits}."
    plan = builds.render_plan(path)
    if plan.secret_generators:
        # Flux decrypts a generator's SOPS-encrypted files only while it builds: rendered, the
        # Secret would hold them decrypted (or, rendered here, still encrypted inside its data).
        which = ", ".join(display_path(p) for p in plan.secret_generators)
        return (
            f"Move {folder} out of the target, or first replace the secretGenerator of {which} "
            "with SOPS-encrypted Secret files listed under resources (a rendered generated "
            "Secret is not encrypted); this fix then gives the command that renders the rest."
        )
    frees = plan.frees
    listed = frees is not None and len(frees) <= MAX_FREED_LISTED
    command = kustomize_render_command(
        path, plan.output, frees if listed and frees else (), helm=plan.helm, loose=plan.loose
    )
    steps = ["render it into plain objects"]
    if not listed:
        steps.append("remove the files only its build reads (too many to list here)")
    elif frees:
        steps.append("remove the files only its build reads")
    steps.append(f"make {shown} list only the rendered file")
    first = f"In {shown}, {edits}; then" if edits else f"Move {folder} out of the target, or"
    return (
        f"{first} {', '.join(steps[:-1])} and {steps[-1]} (whatever builds {folder} then gets "
        f"the same objects): {command}"
    )


def _key_edits(kust: KustomizationFacts | None) -> str:
    """``rename 'resource' to 'resources' and remove 'xyzzy'``: keys kustomize refuses."""
    if kust is None:
        return ""
    meant = near_misses(kust)
    renames = [f"'{k}' to '{meant[k]}'" for k in kust.unknown_keys if k in meant]
    removals = [f"'{k}'" for k in kust.unknown_keys if k not in meant]
    edits = []
    if renames:
        edits.append("rename " + ", ".join(renames))
    if removals:
        edits.append("remove " + ", ".join(removals) + ", which kustomize does not know")
    return " and ".join(edits)


def with_input_fix(issue: Issue, builds: Builds) -> Issue:
    """A file a refused kustomize field reads, or YAML that is no object listed as a resource:
    removing, moving or ignoring it (the code's own fix) would break the build or hide what it
    builds, so the fix says to change the kustomization."""
    if issue.kind not in _REMOVED_BY_DEFAULT:
        return issue
    fix = input_fix(issue.path, builds)
    if fix is None and issue.kind is IssueCode.NON_KRM_YAML:
        fix = listed_fix(issue.path, builds)
    return issue if fix is None else dataclasses.replace(issue, fix=fix)


def listed_fix(path: str, builds: Builds) -> str | None:
    """YAML that is no Kubernetes object, listed among a kustomization's resources: kustomize
    cannot build it either, and an ignore line would hide a file the kustomization lists
    (``ignore-shadows-managed``). So it leaves the resources first. ``None`` when none lists
    it."""
    if not builds.is_built(path):
        return None
    which = ", ".join(display_path(k) for k in builds.listed_by(path)) or "a kustomization"
    return (
        f"{which} lists this file among its resources, but it is no Kubernetes object, so "
        f"kustomize cannot build it either: take its entry out of those resources, then "
        f"{git_rm_command([path])} (or move it out of the target)."
    )


def input_fix(path: str, builds: Builds) -> str | None:
    """The fix for a file that a refused field of a kustomization reads, or ``None``."""
    found = builds.input_of(path)
    if found is None:
        return None
    kustomization, field = found
    plan = builds.render_plan(kustomization)
    rendered = not plan.secret_generators and plan.frees is not None and path in plan.frees
    how = "renders it into plain objects, then removes this file" if rendered else "says how"
    return (
        f"The {field} of {display_path(kustomization)} reads this file, so removing it alone "
        f"breaks that build: change the kustomization instead (its unsupported-kustomize fix "
        f"{how})."
    )


def duplicate_fix(
    path: str, first: str, facts: Mapping[str, FileFacts], builds: Builds
) -> str | None:
    """For two copies of one object in two files, when a kustomization lists one and the other
    is an orphan (kustomize never builds it): remove the orphan. ``None`` otherwise."""
    if path == first:
        return None
    if builds.is_orphan(path) and builds.is_built(first):
        orphan, built = path, first
    elif builds.is_orphan(first) and builds.is_built(path):
        orphan, built = first, path
    else:
        return None
    why = (
        f"{display_path(orphan)} is listed by no kustomization, so kustomize never builds it, "
        f"while {display_path(built)} is built"
    )
    orphan_facts = facts.get(orphan)
    if orphan_facts is None or len(orphan_facts.objects) > 1:  # the file holds more than this
        return f"{why}: remove this object's document from {display_path(orphan)}."
    return f"{why}: remove the orphan: {git_rm_command([orphan])}"
