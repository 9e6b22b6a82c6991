"""Onboarding on the real GitOps repositories in ../shared/corpora (issue 22 item 2): what it
would propose for each, pinned; the proposal valid and free of overlaps; and every proposed
target accepted, or refused only for issues whose fix the body gives, the fixes that can be
applied here applied to show they work."""

from __future__ import annotations

import pytest

from bot.cli.demo import read_tree
from bot.config.schema import parse_config
from bot.gate.codes import CODES, IssueCode, Severity
from bot.git.snapshot import Snapshot
from bot.onboarding.detect import detect_targets
from bot.onboarding.proposal import build_proposal, proposal_files
from bot.onboarding.proposal_body import onboarding_body
from bot.registry.builtin import crd_catalog
from tests.onboarding.corpora_fixes import error_codes, with_fixes
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


# Per corpus and proposed target: its error codes as proposed; what is left once the body's
# ignore lines are added (a denied type's file first taken out of the resources that list it)
# and the types found nowhere recorded as the body says; and those types. What is left needs
# an edit made by hand, each with its fix: render a kustomization (the files it reads go with
# it, a transformer's configuration too), encrypt a Secret, remove a duplicate, correct an
# entry.
PROPOSED: dict[str, dict[str, tuple[dict[str, int], dict[str, int], list[str]]]] = {
    # Helm values, generator inputs and Components with unknown types, 23 kustomizations to
    # render; 8 types only the home-lab cluster serves.
    "bjw-s-labs-home-ops": {
        "kubernetes/apps": (
            {
                "foreign-file": 2,
                "non-krm-yaml": 6,
                "not-followable": 20,
                "unsupported-kustomize": 23,
            },
            {"foreign-file": 1, "non-krm-yaml": 6, "unsupported-kustomize": 23},
            [
                "inference.llmkube.dev/v1alpha1 InferenceService",
                "inference.llmkube.dev/v1alpha1 Model",
                "kopiur.home-operations.com/v1alpha1 ClusterRepository",
                "litellm.home-operations.com/v1alpha1 LiteLLMMCPServer",
                "litellm.home-operations.com/v1alpha1 LiteLLMModel",
                "litellm.home-operations.com/v1alpha1 LiteLLMProxy",
                "miroir.home-operations.com/v1alpha1 MiroirNode",
                "renovate-operator.mogenius.com/v1alpha1 RenovateJob",
            ],
        ),
    },
    # Each environment's flux-system kustomization patches inline: render it.
    "flux2-kustomize-helm-example": {
        "apps": ({}, {}, []),
        "clusters/production": ({"unsupported-kustomize": 1}, {"unsupported-kustomize": 1}, []),
        "clusters/staging": ({"unsupported-kustomize": 1}, {"unsupported-kustomize": 1}, []),
        "infrastructure": ({}, {}, []),
    },
    "sulibot-home-ops": {
        "kubernetes/apps": (
            {
                "duplicate-identity": 31,
                "foreign-file": 5,
                "invalid-kustomize": 1,
                "non-krm-yaml": 31,
                "not-followable": 34,
                "plaintext-secret": 1,
                "unsupported-kustomize": 11,
            },
            {
                "duplicate-identity": 22,
                "foreign-file": 1,
                "invalid-kustomize": 1,
                "non-krm-yaml": 28,
                "plaintext-secret": 1,
                "unsupported-kustomize": 11,
            },
            [
                "tuppr.home-operations.com/v1alpha1 KubernetesUpgrade",
                "tuppr.home-operations.com/v1alpha1 TalosUpgrade",
                "volsync.backube/v1alpha1 KopiaMaintenance",
            ],
        ),
        "kubernetes/bootstrap": ({"foreign-file": 1, "non-krm-yaml": 1}, {}, []),
        # Its kustomization lists ./flux-system, which is not there.
        "kubernetes/clusters/cluster-102": ({"invalid-kustomize": 1}, {"invalid-kustomize": 1}, []),
        "kubernetes/clusters/staging": ({}, {}, []),
        # Patches kept as whole Deployments beside gotk-components.yaml.
        "kubernetes/flux": (
            {"duplicate-identity": 3, "unsupported-kustomize": 1},
            {"duplicate-identity": 3, "unsupported-kustomize": 1},
            [],
        ),
    },
    "xunholy-k8s-gitops": {
        "kubernetes/apps": (
            {
                "duplicate-identity": 2,
                "foreign-file": 1,
                "non-krm-yaml": 73,
                "not-followable": 34,
                "plaintext-secret": 1,
                "unsupported-kustomize": 54,
            },
            {
                "duplicate-identity": 2,
                "non-krm-yaml": 73,
                "plaintext-secret": 1,
                "unsupported-kustomize": 54,
            },
            [
                "gcp.upbound.io/v1beta1 ProviderConfig",
                "kguardian.dev/v1alpha1 AuditClusterNetworkPolicy",
                "meta.pkg.crossplane.io/v1 Configuration",
                "talos.dev/v1alpha1 ServiceAccount",
                "volsync.backube/v1alpha1 KopiaMaintenance",
                "xunholy.io/v1alpha1 GitOpsCluster",
            ],
        ),
        "kubernetes/clusters/cluster-00/secrets": ({"foreign-file": 1}, {}, []),
        # Two integrations' transformers.yaml: kustomize's own LabelTransformer and
        # AnnotationsTransformer, freed by rendering the kustomizations that read them.
        "talos": (
            {
                "duplicate-identity": 2,
                "non-krm-yaml": 5,
                "not-followable": 4,
                "plaintext-secret": 3,
                "unsupported-kustomize": 2,
            },
            {
                "duplicate-identity": 2,
                "not-followable": 4,
                "plaintext-secret": 3,
                "unsupported-kustomize": 2,
            },
            ["builtin AnnotationsTransformer", "builtin LabelTransformer"],
        ),
    },
}
# Codes whose fix is the code's own, naming the line to edit (the body gives it per code).
_FIXED_AT_THE_LINE = frozenset(
    {
        IssueCode.DUPLICATE_IDENTITY,
        IssueCode.INVALID_KUSTOMIZE,
        IssueCode.IMPURE_MANAGED_FILE,
        IssueCode.MIXED_MANAGED_ALLOWLISTED,
    }
)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_proposed_target_is_accepted_or_refused_only_with_fixes_the_body_gives(
    name: str,
) -> None:
    snapshot = corpus_snapshot(name)
    proposal = build_proposal(snapshot, catalog=crd_catalog())
    body = onboarding_body(proposal, "github")
    found = {}
    for target in proposal.targets:
        report = target.report
        assert report is not None
        after = with_fixes(snapshot, proposal, target)
        missing = sorted(t.name for t in target.suggestion.missing) if target.suggestion else []
        found[target.candidate.path] = (
            error_codes(report.issues),
            error_codes(after.issues),
            missing,
        )
        for issue in report.issues:
            # Never a folder whose kustomization reaches outside it.
            assert "outside-target" not in issue.message and "remote-base" not in issue.message
            if issue.kind is IssueCode.NOT_FOLLOWABLE and "not-served" in issue.message:
                # Listed in the body with the fix that records it (or, kustomize's own
                # configuration, read by a kustomization the body says to render).
                assert issue.subject in missing, issue
                assert f"<code>{issue.subject}</code>" in body
        for issue in after.issues:
            if issue.severity is not Severity.ERROR:
                continue
            assert issue.fix is not None or issue.kind in _FIXED_AT_THE_LINE, issue
            # No type is left unfollowable but a file a kustomization reads, which rendering
            # that kustomization removes.
            if issue.kind is IssueCode.NOT_FOLLOWABLE:
                assert issue.fix is not None and "reads this file" in issue.fix
        for code in {i.kind for i in report.issues if i.severity is Severity.ERROR}:
            assert f"  **Fix**: {CODES[code].fix}" in body, code
    assert found == PROPOSED[name]
    if any(t.suggestion and t.suggestion.missing for t in proposal.targets):
        assert "kubectl api-resources -o wide &#62; api-resources.txt" in body
