"""What an onboarding pull request adds, and the gate's verdict on it (design.md 6.6). Pure.

:func:`build_proposal` detects the targets (:mod:`bot.onboarding.detect`) and writes
``.ichor.yaml`` naming them, each target's README.md and fully commented ``.gittargetignore``
where it has none (:mod:`bot.onboarding.templates`), and the capabilities file each target
needs: the types its objects use that Kubernetes itself does not serve, from the repository's
CRDs and the catalog (:func:`bot.gate.suggest.suggest_for_target`), beside the target's folder
(``clusters/prod.capabilities.txt``, outside every target). When nothing qualifies it proposes
one new, empty target (:mod:`bot.onboarding.empty`). Then it gates the tree as it would be
after merging, which is what the body shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.config.schema import parse_config
from bot.gate.content.cache import FactsCache, MemoryFactsCache
from bot.gate.policy import CONFIG_FILE, TargetPolicy
from bot.gate.report import ConfigIssue, TargetReport
from bot.gate.run import run_gate
from bot.gate.suggest import repository_crds, suggest_for_target
from bot.git.overlay import overlay
from bot.git.snapshot import Snapshot
from bot.ignore.rules import IGNORE_FILE
from bot.onboarding.detect import Candidate, LeftOut, detect
from bot.onboarding.empty import SOPS_CONFIG, empty_candidate, sops_config, uses_sops
from bot.onboarding.templates import ichor_yaml, ignore_template, target_readme
from bot.onboarding.templates import yaml_scalar as yaml_scalar  # tests and callers read it here
from bot.paths import join
from bot.registry.catalog import CrdCatalog
from bot.registry.suggest import Suggestion

README = "README.md"
CAPABILITIES_SUFFIX = ".capabilities.txt"


@dataclass(frozen=True, slots=True)
class ProposedTarget:
    candidate: Candidate
    capabilities: str | None = None  # the capabilities file it names, when it needs one
    suggestion: Suggestion | None = None  # the types needing an entry, and where each came from
    report: TargetReport | None = None  # the gate on the proposed tree


@dataclass(frozen=True, slots=True)
class Proposal:
    targets: tuple[ProposedTarget, ...]
    files: Mapping[str, bytes]  # what the pull request adds, by path
    left_out: tuple[LeftOut, ...] = ()
    empty: bool = False  # nothing qualified: one new, empty target
    sops: str | None = None  # where the new target's .sops.yaml took its recipients from
    sops_unknown: bool = False  # the repository uses SOPS, but names no recipient
    config_issues: tuple[ConfigIssue, ...] = ()  # an edited .ichor.yaml that is not valid
    looks_like_gitops: bool = True  # see bot.onboarding.detect.Detection

    @property
    def candidates(self) -> tuple[Candidate, ...]:
        return tuple(t.candidate for t in self.targets)


def build_proposal(
    snapshot: Snapshot, *, catalog: CrdCatalog, cache: FactsCache | None = None
) -> Proposal:
    """The proposal for a repository without ``.ichor.yaml``."""
    cache = cache or MemoryFactsCache()
    detection = detect(snapshot, cache=cache)
    candidates = detection.candidates
    empty = not candidates
    extra: dict[str, bytes] = {}
    sops: str | None = None
    if empty:
        candidates = (empty_candidate(snapshot),)
        if uses_sops(snapshot):
            found = sops_config(snapshot, candidates[0].path)
            if found is not None:
                extra[join(candidates[0].path, SOPS_CONFIG)], sops = found
    suggestions = suggestions_for(snapshot, candidates, catalog=catalog)
    taken = {entry.path for entry in snapshot}
    capabilities = {
        c.name: capabilities_path(c.path, taken)
        for c in candidates
        if (s := suggestions.get(c.name)) is not None and s.types
    }
    for c in candidates:
        if c.name in capabilities:
            extra[capabilities[c.name]] = suggestions[c.name].text.encode()
    files = {**proposal_files(candidates, snapshot, capabilities), **extra}
    reports = proposal_reports(snapshot, files, cache=cache)
    targets = tuple(
        ProposedTarget(c, capabilities.get(c.name), suggestions.get(c.name), reports.get(c.name))
        for c in candidates
    )
    return Proposal(
        targets,
        files,
        detection.left_out,
        empty=empty,
        sops=sops,
        sops_unknown=empty and sops is None and uses_sops(snapshot),
        looks_like_gitops=detection.looks_like_gitops,
    )


def suggestions_for(
    snapshot: Snapshot, candidates: Sequence[Candidate], *, catalog: CrdCatalog
) -> dict[str, Suggestion]:
    """The capabilities each candidate needs, by name; none at the root, where the file would
    be inside the target (detection proposes the root only when it needs none)."""
    crds = repository_crds(snapshot)  # read once for every target
    return {
        c.name: suggest_for_target(
            snapshot, TargetPolicy(c.name, c.path), catalog=catalog, repository=crds
        )
        for c in candidates
        if c.path
    }


def capabilities_path(target: str, taken: set[str]) -> str:
    """``clusters/prod.capabilities.txt``: beside the target's folder, so outside every target
    (a folder holding it would hold the target too); a numbered name when that one is taken."""
    path, n = target + CAPABILITIES_SUFFIX, 1
    while path in taken:
        n += 1
        path = f"{target}.capabilities-{n}.txt"
    return path


def proposal_files(
    candidates: Sequence[Candidate],
    snapshot: Snapshot,
    capabilities: Mapping[str, str] | None = None,
) -> dict[str, bytes]:
    """Path → content: ``.ichor.yaml``, then each target's README.md and ``.gittargetignore``
    unless the snapshot has one (a README.md in another case counts: on a checkout that folds
    case, two would collide)."""
    present = {entry.path.casefold() for entry in snapshot}
    files = {CONFIG_FILE: ichor_yaml(candidates, capabilities).encode()}
    for candidate in candidates:
        readme = join(candidate.path, README)
        if readme.casefold() not in present:
            files[readme] = target_readme(candidate).encode()
        ignore = join(candidate.path, IGNORE_FILE)
        if snapshot.get(ignore) is None:
            files[ignore] = ignore_template(candidate).encode()
    return files


def proposal_reports(
    snapshot: Snapshot, files: Mapping[str, bytes], *, cache: FactsCache | None = None
) -> dict[str, TargetReport]:
    """The gate on the tree the proposal makes (``snapshot`` with ``files`` written), by
    target name: what the onboarding body shows. Empty when the proposed ``.ichor.yaml`` has
    issues, which a proposal built by :func:`proposal_files` never has."""
    result = parse_config(files[CONFIG_FILE])
    if result.config is None:
        return {}
    report = run_gate(overlay(snapshot, files), result.config.gate_policy(), cache=cache)
    return {target.name: target for target in report.targets}
