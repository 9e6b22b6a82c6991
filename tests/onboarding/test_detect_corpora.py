"""Detection on the real GitOps repositories in ../shared/corpora: what onboarding would
propose for each, pinned, and the proposal it makes valid and free of overlaps."""

from __future__ import annotations

import pytest

from bot.cli.demo import read_tree
from bot.config.schema import parse_config
from bot.git.snapshot import Snapshot
from bot.onboarding.detect import detect_targets
from bot.onboarding.proposal import proposal_files
from tests.onboarding.test_detect import assert_no_overlap, assert_valid_names
from tests.test_corpora import CORPORA, kept_symlinks

pytestmark = pytest.mark.needs_shared

# (name, path, has a kustomization.yaml at its top) of each proposed target.
EXPECTED: dict[str, list[tuple[str, str, bool]]] = {
    "bjw-s-labs-home-ops": [("kubernetes", "kubernetes", False)],
    "flux2-kustomize-helm-example": [
        ("apps", "apps", False),
        ("clusters", "clusters", False),
        ("infrastructure-configs", "infrastructure/configs", True),
        ("infrastructure-controllers", "infrastructure/controllers", True),
    ],
    # kubernetes/ holds a Helm chart (kubernetes/shared/repo/helm/app-scaffolder), so it is
    # proposed in parts, the chart's folder left out.
    "sulibot-home-ops": [
        ("kubernetes-apps", "kubernetes/apps", True),
        ("kubernetes-bootstrap", "kubernetes/bootstrap", False),
        ("kubernetes-clusters", "kubernetes/clusters", False),
        ("kubernetes-components", "kubernetes/components", False),
        ("kubernetes-flux-flux-system", "kubernetes/flux/flux-system", True),
    ],
    # .archive/ qualifies too, but a hidden folder is never proposed.
    "xunholy-k8s-gitops": [
        ("kubernetes", "kubernetes", False),
        ("talos-integrations-cert-approver", "talos/integrations/cert-approver", True),
        ("talos-integrations-cilium", "talos/integrations/cilium", True),
    ],
}


def corpus_snapshot(name: str) -> Snapshot:
    corpus = CORPORA / name
    links = kept_symlinks(corpus)
    files = {p: d for p, d in read_tree(corpus / "tree").items() if p not in links}
    return Snapshot.from_files(files, symlinks=links)


def test_every_corpus_is_pinned() -> None:
    assert sorted(p.name for p in CORPORA.iterdir() if (p / "tree").is_dir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_detection_on_the_corpus(name: str) -> None:
    snapshot = corpus_snapshot(name)
    found = detect_targets(snapshot)
    assert [(c.name, c.path, c.has_kustomization) for c in found] == EXPECTED[name]
    assert_no_overlap(found)
    assert_valid_names(found)
    assert all(c.objects * 5 >= c.documents * 4 and c.objects >= 3 for c in found)
    result = parse_config(proposal_files(found, snapshot)[".ichor.yaml"])
    assert result.issues == ()
    assert result.config is not None
    policy = result.config.gate_policy()
    assert [(t.name, t.path, t.mode) for t in policy.targets] == [
        (c.name, c.path, "relaxed") for c in found
    ]
