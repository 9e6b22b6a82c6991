"""The onboarding proposal as pushed to ``ichor/bootstrap`` (design.md 6.6), for the body to be
written again with fresh verdicts. Pure.

Someone edited the proposal: renamed or removed a target, recorded the cluster's types in a
capabilities file, ignored a file. The targets are now those of the ``.ichor.yaml`` at the
pushed commit (an invalid one is reported as such), each gated on that tree. Where each
capabilities entry would come from is suggested afresh; a type no source knows that the
target's capabilities file now serves is said to come from that file. The folders detection
leaves out are said again, but for those now configured.
"""

from __future__ import annotations

import dataclasses

from bot.config.schema import load_config
from bot.gate.content.cache import FactsCache, MemoryFactsCache
from bot.gate.policy import TargetPolicy
from bot.gate.run import run_gate
from bot.gate.suggest import repository_crds, suggest_for_target
from bot.git.snapshot import EntryKind, Snapshot
from bot.onboarding.detect import Candidate, detect
from bot.onboarding.empty import SOPS_CONFIG, sops_config
from bot.onboarding.folders import count_folders
from bot.onboarding.proposal import Proposal, ProposedTarget
from bot.paths import display_path, join
from bot.registry.capabilities import CapabilitiesError, parse_capabilities
from bot.registry.catalog import CrdCatalog
from bot.registry.crd import CrdFacts
from bot.registry.suggest import Origin, Suggestion


def proposal_at(
    snapshot: Snapshot, *, catalog: CrdCatalog, cache: FactsCache | None = None
) -> Proposal:
    """The proposal the tree at ``ichor/bootstrap`` makes."""
    loaded = load_config(snapshot)
    if loaded.config is None:
        return Proposal((), {}, config_issues=loaded.issues)
    cache = cache or MemoryFactsCache()
    policy = loaded.config.gate_policy()
    reports = {r.name: r for r in run_gate(snapshot, policy, cache=cache).targets}
    folders = count_folders(snapshot, policy.max_yaml_bytes)
    crds = repository_crds(snapshot)
    targets = []
    for target in policy.targets:
        folder = folders.get(target.path)
        candidate = Candidate(
            target.name,
            target.path,
            folder.objects if folder else 0,
            folder.documents if folder else 0,
            folder.has_kustomization if folder else False,
        )
        suggestion = None
        if target.path:
            fresh = suggest_for_target(
                snapshot, TargetPolicy(target.name, target.path), catalog=catalog, repository=crds
            )
            suggestion = _recorded(snapshot, target, fresh, catalog, crds)
        targets.append(
            ProposedTarget(candidate, target.capabilities, suggestion, reports.get(target.name))
        )
    detection = detect(snapshot, cache=cache)
    configured = {t.path for t in policy.targets}
    empty = bool(targets) and not detection.candidates
    empty = empty and all(t.candidate.documents == 0 for t in targets)
    return Proposal(
        tuple(targets),
        {},
        tuple(x for x in detection.left_out if x.path not in configured),
        empty=empty,
        sops=_sops(snapshot, targets[0].candidate.path) if empty and targets else None,
    )


def _sops(snapshot: Snapshot, target: str) -> str | None:
    """Where the new target's ``.sops.yaml`` took its recipients from, as first proposed."""
    if snapshot.get(join(target, SOPS_CONFIG)) is None:
        return None
    found = sops_config(snapshot, target)
    return found[1] if found is not None else None


def _recorded(
    snapshot: Snapshot,
    target: TargetPolicy,
    fresh: Suggestion,
    catalog: CrdCatalog,
    crds: tuple[tuple[str, CrdFacts], ...],
) -> Suggestion:
    """``fresh``, its types found nowhere but served by the target's capabilities file said to
    come from that file."""
    if not fresh.missing or target.capabilities is None:
        return fresh
    entry = snapshot.get(target.capabilities)
    if entry is None or entry.kind is not EntryKind.FILE:
        return fresh
    try:
        recorded = parse_capabilities(entry.read())
    except CapabilitiesError:
        return fresh  # the gate reports it
    shown = display_path(target.capabilities)
    with_file = suggest_for_target(
        snapshot,
        TargetPolicy(target.name, target.path),
        catalog=catalog,
        recorded=recorded,
        recorded_name=f"the capabilities file {shown}",
        repository=crds,
    )
    served = {t.name: t for t in with_file.types if t.origin is Origin.RECORDED}
    types = tuple(served[t.name] if not t.found and t.name in served else t for t in fresh.types)
    return dataclasses.replace(fresh, types=types)
