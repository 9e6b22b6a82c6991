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
    # kubernetes/ holds kustomize Components whose objects are named ${APP}-...: a template.
    # kubernetes/apps beside them is proposed whole; .forgejo is hidden.
    "bjw-s-labs-home-ops": [("kubernetes-apps", "kubernetes/apps", False)],
    # clusters/ holds two environments defining the same four objects: each is a target.
    # apps/production and apps/staging are overlays of apps/base, so apps stays whole.
    "flux2-kustomize-helm-example": [
        ("apps", "apps", False),
        ("clusters-production", "clusters/production", False),
        ("clusters-staging", "clusters/staging", False),
        ("infrastructure", "infrastructure", False),
    ],
    # kubernetes/ holds a Helm chart (kubernetes/shared/repo/helm/app-scaffolder), so it is
    # proposed in parts. kubernetes/clusters merges environments; of those, cluster-101,
    # cluster-104 and production reach outside themselves (../../apps, a patch in another
    # folder), so only the two small ones stand alone. kubernetes/components is a template.
    "sulibot-home-ops": [
        ("kubernetes-apps", "kubernetes/apps", True),
        ("kubernetes-bootstrap", "kubernetes/bootstrap", False),
        ("kubernetes-clusters-cluster-102", "kubernetes/clusters/cluster-102", True),
        ("kubernetes-clusters-staging", "kubernetes/clusters/staging", True),
        ("kubernetes-flux", "kubernetes/flux", False),
    ],
    # kubernetes/ holds Components named ${...}; .archive/ qualifies too, but a hidden folder
    # is never proposed, nor the Crossplane examples.
    "xunholy-k8s-gitops": [
        ("kubernetes-apps", "kubernetes/apps", False),
        ("kubernetes-clusters-cluster-00-secrets", "kubernetes/clusters/cluster-00/secrets", False),
        ("talos", "talos", False),
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
    assert all(c.objects * 5 >= c.documents * 4 and c.objects >= 1 for c in found)
    result = parse_config(proposal_files(found, snapshot)[".ichor.yaml"])
    assert result.issues == ()
    assert result.config is not None
    policy = result.config.gate_policy()
    assert [(t.name, t.path, t.mode) for t in policy.targets] == [
        (c.name, c.path, "relaxed") for c in found
    ]
