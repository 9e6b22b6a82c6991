"""The gate's identities equal what ``kustomize build`` makes, on every folder of the corpora.

``fixtures/content/kustomize_reference.json`` records, for each kustomization folder of the
shared corpora whose build uses only accepted features, every object kustomize builds and the
file it came from (see its PROVENANCE note; ``scripts/kustomize_reference.py`` regenerates it).
Each folder is checked here as a target of its own, and the identities the gate gives the
objects of each file are compared with kustomize's. The API server drops the namespace
kustomize writes on an object of a cluster-scoped type it does not know (a ``ClusterIssuer``),
so the reference does too, for the types the target's registry knows to be cluster-scoped.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from bot.gate.content.identity import Identity
from bot.gate.policy import TargetPolicy
from bot.gate.run import managed_identities, prepare_target
from bot.git.directory import read_directory
from bot.paths import join
from bot.registry.followability import CLUSTER
from tests.conftest import FIXTURES, SHARED, load_fixture

CORPORA = SHARED / "corpora"
REFERENCE: dict[str, Any] = load_fixture("content/kustomize_reference.json")
# Folders compared when the reference was recorded; a smaller number means folders were lost.
FOLDERS_COMPARED = 396
OBJECTS_COMPARED = 1683  # one reached from nested folders counts once per folder


def _mismatches(
    corpus: str, tree: Path, reference: dict[str, list[list[str]]]
) -> tuple[int, list[str]]:
    snapshot = read_directory(tree)
    found: list[str] = []
    for folder, objects in sorted(reference.items()):
        prepared = prepare_target(snapshot, TargetPolicy("folder", folder))
        gate = managed_identities(prepared)
        built: dict[str, list[Identity]] = defaultdict(list)
        for file, api_version, kind, namespace, name in objects:
            group, _, version = api_version.rpartition("/")
            scope = prepared.registry.resolve(group, version, kind).scope
            built[join(folder, file)].append(
                (group, kind, "" if scope == CLUSTER else namespace, name)
            )
        for path, identities in sorted(built.items()):
            ours = sorted(gate.get(path, ()))
            if ours != sorted(identities):
                found.append(f"{corpus}: {folder or '.'}: {path}: gate {ours} != kustomize")
                found.append(f"    {sorted(identities)}")
    return len(reference), found


def test_namespace_objects_are_named_by_the_outermost_kustomization() -> None:
    # Every app folder holds `Namespace _`; kustomize names each after its folder's namespace.
    reference = REFERENCE["fixtures"]["kustomize_cases"]["built"]
    built = {(f, k, name) for f, _, k, _, name in reference["apps"] if k == "Namespace"}
    assert built == {
        ("cert-manager/namespace.yaml", "Namespace", "cert-manager"),
        ("media/namespace.yaml", "Namespace", "media"),
        ("media/widget.yaml", "Namespace", "not-core"),  # not the core group: not renamed
    }
    count, mismatches = _mismatches(
        "kustomize_cases", FIXTURES / "content/kustomize_cases/tree", reference
    )
    assert count == len(reference) == 5
    assert mismatches == [], "\n".join(mismatches)


def test_reference_counts_every_folder() -> None:
    corpora = REFERENCE["corpora"].values()
    assert sum(len(c["built"]) for c in corpora) == FOLDERS_COMPARED
    assert sum(len(o) for c in corpora for o in c["built"].values()) == OBJECTS_COMPARED
    # Excluded: a refused feature reached (components, generators ...), or no kustomize build.
    assert sum(len(c["refused"]) for c in corpora) == 144
    assert sum(len(c["build_failed"]) for c in corpora) == 2
    assert REFERENCE["kubectl"] == [
        "Client Version: v1.32.4-dispatcher",
        "Kustomize Version: v5.5.0",
    ]


@pytest.mark.needs_shared
def test_gate_identities_equal_kustomize_build() -> None:
    compared, mismatches = 0, []
    for corpus, record in sorted(REFERENCE["corpora"].items()):
        count, found = _mismatches(corpus, CORPORA / corpus / "tree", record["built"])
        compared += count
        mismatches.extend(found)
    assert compared == FOLDERS_COMPARED
    assert mismatches == [], "\n".join(mismatches[:40])
