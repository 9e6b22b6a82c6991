"""Applying the fixes an onboarding body gives, to show they work (issue 22 item 2).

Two kinds of fix can be applied without a cluster or kubectl: a line in the target's
``.gittargetignore`` (for a file in no accepted role, YAML that is not Kubernetes objects, a
type the policy denies, taken out of the resources of the kustomization that lists it first,
as its fix says), and recording the types no source knew, the way the body says (``kubectl
api-resources -o wide`` into ``types --suggest --capabilities``), with a recording made up here
that serves them. What is left needs an edit the test cannot make (render a
kustomization, encrypt a Secret, remove a duplicate): each of those has its own fix.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

import yaml

from bot.gate.codes import IssueCode, Severity
from bot.gate.content.kustomize import resolve_reference
from bot.gate.fixes import ignore_pattern_for
from bot.gate.policy import GatePolicy, TargetPolicy
from bot.gate.report import Issue, TargetReport
from bot.gate.run import run_gate
from bot.gate.structural import BUILD_DIRECTIVES
from bot.gate.suggest import suggest_for_target
from bot.git.overlay import overlay
from bot.git.snapshot import Snapshot
from bot.ignore.rules import IGNORE_FILE
from bot.onboarding.proposal import Proposal, ProposedTarget
from bot.paths import join, relative_to
from bot.registry.builtin import crd_catalog
from bot.registry.capabilities import parse_capabilities
from bot.registry.suggest import COLUMNS, SuggestedType

IGNORED_BY_A_LINE = frozenset(
    {
        IssueCode.FOREIGN_FILE,
        IssueCode.FOREIGN_SYMLINK,
        IssueCode.FOREIGN_SUBMODULE,
        IssueCode.NON_KRM_YAML,
        IssueCode.INVALID_YAML,
        IssueCode.FILE_TOO_LARGE,
    }
)


def ignore_lines(report: TargetReport) -> list[str]:
    """The lines the body gives: a file whose issue has no fix of its own (one with a fix is
    read by a kustomization, and ignoring it alone would break that build), and each file of
    a type the policy denies (its fix appends exactly this line)."""
    lines = []
    for issue in report.issues:
        if issue.severity is not Severity.ERROR or issue.path == report.path:
            continue
        ignorable = issue.kind in IGNORED_BY_A_LINE and issue.fix is None
        denied = issue.kind is IssueCode.NOT_FOLLOWABLE and "denied-by-policy" in issue.message
        if ignorable or denied:
            lines.append(ignore_pattern_for(relative_to(issue.path, report.path)))
    return sorted(set(lines))


def denied_files(report: TargetReport) -> set[str]:
    return {
        i.path
        for i in report.issues
        if i.kind is IssueCode.NOT_FOLLOWABLE and "denied-by-policy" in i.message
    }


def unlisted(snapshot: Snapshot, target: str, paths: set[str]) -> dict[str, bytes]:
    """The target's kustomizations with ``paths`` taken out of their resources."""
    edited: dict[str, bytes] = {}
    for entry in snapshot:
        folder, name = posixpath.split(entry.path)
        if name not in BUILD_DIRECTIVES or not (folder + "/").startswith(target + "/"):
            continue
        doc = yaml.safe_load(entry.read())
        resources = doc.get("resources") if isinstance(doc, dict) else None
        if not isinstance(resources, list):
            continue
        kept = [r for r in resources if resolve_reference(folder, str(r)) not in paths]
        if len(kept) != len(resources):
            edited[entry.path] = yaml.safe_dump({**doc, "resources": kept}).encode()
    return edited


def recording(types: Sequence[SuggestedType]) -> bytes:
    """``kubectl api-resources -o wide`` of a cluster that serves ``types``."""
    rows = [COLUMNS] + [
        (
            t.kind.lower() + "s",
            "",
            f"{t.group}/{t.version}",
            "true",
            t.kind,
            "create,delete,get,list,patch,update,watch",
        )
        for t in types
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = ["   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return ("\n".join(lines) + "\n").encode()


def with_fixes(snapshot: Snapshot, proposal: Proposal, target: ProposedTarget) -> TargetReport:
    """The target's report once the ignore lines are added and the unknown types recorded
    (kustomize's own ``builtin`` configurations are not: no cluster serves them, and rendering
    the kustomization that reads them is their fix)."""
    assert target.report is not None
    files = dict(proposal.files)
    name, path = target.candidate.name, target.candidate.path
    lines = ignore_lines(target.report)
    if lines:
        ignore = join(path, IGNORE_FILE)
        files[ignore] = files.get(ignore, b"") + ("\n".join(lines) + "\n").encode()
    tree = overlay(snapshot, files)
    tree = overlay(tree, unlisted(tree, path, denied_files(target.report)))
    policy = TargetPolicy(name, path, capabilities=target.capabilities)
    served = [t for t in (target.suggestion.missing if target.suggestion else ()) if t.group]
    if served and target.capabilities is not None:
        recorded = parse_capabilities(recording(served))
        text = suggest_for_target(tree, policy, catalog=crd_catalog(), recorded=recorded).text
        tree = overlay(tree, {target.capabilities: text.encode()})
    (report,) = run_gate(tree, GatePolicy((policy,))).targets
    return report


def error_codes(issues: Sequence[Issue]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for issue in issues:
        if issue.severity is Severity.ERROR:
            counts[issue.kind.value] = counts.get(issue.kind.value, 0) + 1
    return dict(sorted(counts.items()))
