"""``types --suggest`` on the real GitOps repositories in ../shared/corpora (issue 22 item 1).

Without a cluster, nearly every object of a Flux repository was ``not-served``. Once the file
``types --suggest`` writes is in place, a target is refused for ``not-followable`` only for a
type the built-in policy denies (a ``Job``, say) or a type neither the repository nor the
catalog knows. Those are listed below with why, so a catalog change shows here.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bot.gate.policy import GatePolicy, TargetPolicy
from bot.gate.run import run_gate
from bot.gate.suggest import suggest_for_target
from bot.git.directory import read_directory
from bot.onboarding.detect import detect_targets
from bot.registry.builtin import crd_catalog
from bot.registry.capabilities import parse_capabilities
from tests.conftest import RunCli
from tests.test_corpora import CORPORA, NAMES

pytestmark = pytest.mark.needs_shared

HOME_OPERATIONS = "a home-lab operator: no CRD in the repository, not in the catalog"
KOPIA_VOLSYNC = (
    "a Kopia fork of VolSync: upstream VolSync (in the catalog) has no such kind, and the "
    "repository holds no CRD for it"
)
# Per corpus: every type left unknown, and why.
UNKNOWN: dict[str, dict[str, str]] = {
    "bjw-s-labs-home-ops": {
        "inference.llmkube.dev/v1alpha1 InferenceService": HOME_OPERATIONS,
        "inference.llmkube.dev/v1alpha1 Model": HOME_OPERATIONS,
        "kopiur.home-operations.com/v1alpha1 ClusterRepository": HOME_OPERATIONS,
        "kopiur.home-operations.com/v1alpha1 Restore": HOME_OPERATIONS,
        "kopiur.home-operations.com/v1alpha1 SnapshotPolicy": HOME_OPERATIONS,
        "kopiur.home-operations.com/v1alpha1 SnapshotSchedule": HOME_OPERATIONS,
        "litellm.home-operations.com/v1alpha1 LiteLLMMCPServer": HOME_OPERATIONS,
        "litellm.home-operations.com/v1alpha1 LiteLLMModel": HOME_OPERATIONS,
        "litellm.home-operations.com/v1alpha1 LiteLLMProxy": HOME_OPERATIONS,
        "miroir.home-operations.com/v1alpha1 MiroirNode": HOME_OPERATIONS,
        "renovate-operator.mogenius.com/v1alpha1 RenovateJob": HOME_OPERATIONS,
    },
    "flux2-kustomize-helm-example": {},
    "sulibot-home-ops": {
        "tuppr.home-operations.com/v1alpha1 KubernetesUpgrade": HOME_OPERATIONS,
        "tuppr.home-operations.com/v1alpha1 TalosUpgrade": HOME_OPERATIONS,
        "volsync.backube/v1alpha1 KopiaMaintenance": KOPIA_VOLSYNC,
    },
    "xunholy-k8s-gitops": {
        # kustomize's own transformer configurations (apiVersion: builtin), named by a
        # kustomization's `transformers:`; the gate takes them for managed objects.
        "builtin AnnotationsTransformer": "a kustomize transformer config, not an API type",
        "builtin LabelTransformer": "a kustomize transformer config, not an API type",
        "apps.emqx.io/v2beta1 EMQX": "the EMQX operator is not in the catalog",
        "gcp.upbound.io/v1beta1 ProviderConfig": "Crossplane's GCP provider is not in the catalog",
        "kguardian.dev/v1alpha1 AuditClusterNetworkPolicy": "not in the catalog",
        # crossplane.yaml, the metadata of a Crossplane package: read by the crossplane CLI,
        # never served by a cluster.
        "meta.pkg.crossplane.io/v1 Configuration": "package metadata, not an API type",
        "talos.dev/v1alpha1 ServiceAccount": "Talos serves it itself; no CRD manifest to read",
        "volsync.backube/v1alpha1 KopiaMaintenance": KOPIA_VOLSYNC,
        "xunholy.io/v1alpha1 GitOpsCluster": "the repository owner's own type, no CRD in it",
    },
}


def not_followable(issues: list[dict[str, Any]]) -> Counter[tuple[str, str]]:
    """(type, reason) of every not-followable issue; the message is '<type>: ... — <reason>...'."""
    found: Counter[tuple[str, str]] = Counter()
    for issue in issues:
        if issue["kind"] == "not-followable":
            shown, _, summary = issue["message"].partition(": not followable — ")
            found[(shown, summary.partition(":")[0])] += 1
    return found


def test_every_corpus_has_its_unknown_types_listed() -> None:
    assert set(NAMES) == set(UNKNOWN)


@pytest.mark.parametrize("name", NAMES)
def test_the_suggested_file_leaves_only_unknown_or_denied_types(
    name: str, run_cli: RunCli, tmp_path: Path
) -> None:
    tree = str(CORPORA / name / "tree")
    before = run_cli("check", tree, "--path", ".", "--format", "json")
    (target,) = before.json()["targets"]
    assert any(reason == "not-served" for _, reason in not_followable(target["issues"]))

    caps = tmp_path / "caps.txt"
    result = run_cli("types", tree, "--suggest", "--path", ".", "--output", str(caps))
    assert result.code == 0, result.err
    missing = {
        line.removeprefix("ichor-bot: warning: not found: ").partition(" (")[0]
        for line in result.err.splitlines()
        if line.startswith("ichor-bot: warning: not found: ")
    }
    assert missing == set(UNKNOWN[name])
    assert "is still" not in result.err  # every written entry makes its type followable

    after = run_cli("check", tree, "--path", ".", "--capabilities", str(caps), "--format", "json")
    (target,) = after.json()["targets"]
    left = not_followable(target["issues"])
    assert {shown for shown, reason in left if reason == "not-served"} == set(UNKNOWN[name])
    assert {reason for _, reason in left} <= {"not-served", "denied-by-policy"}


@pytest.mark.parametrize("name", NAMES)
def test_every_proposed_target_is_followable_with_its_suggested_file(name: str) -> None:
    catalog = crd_catalog()
    with read_directory(str(CORPORA / name / "tree")) as snapshot:
        candidates = detect_targets(snapshot)
        assert candidates
        for candidate in candidates:
            target = TargetPolicy(candidate.name, candidate.path)
            suggestion = suggest_for_target(snapshot, target, catalog=catalog)
            assert {t.name for t in suggestion.missing} <= set(UNKNOWN[name])
            with_file = TargetPolicy(
                candidate.name,
                candidate.path,
                loaded_capabilities=parse_capabilities(suggestion.text.encode()),
            )
            (report,) = run_gate(snapshot, GatePolicy((with_file,))).targets
            for issue in report.issues:
                if issue.kind != "not-followable":
                    continue
                shown = issue.message.partition(": not followable")[0]
                assert "denied-by-policy" in issue.message or shown in UNKNOWN[name], issue
