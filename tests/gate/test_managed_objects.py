"""The managed objects a target report carries: each identity once, where it is first defined,
with its document's digest in a strict target; what is not a managed object is not listed."""

from __future__ import annotations

from bot.gate.content.cache import MemoryFactsCache
from bot.gate.content.digest import document_digest
from bot.gate.content.identity import identity_text
from bot.gate.policy import GatePolicy, TargetPolicy
from bot.gate.report import ManagedObject
from bot.gate.run import run_gate
from tests.support.memory_tree import MemoryTree, check_target

STRICT = TargetPolicy("t", "t", mode="strict")

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod}
spec: {replicas: 2}
"""
CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: prod}
"""
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {name: prod}\n"


def test_objects_are_listed_in_path_and_document_order_with_digests() -> None:
    report = check_target(
        {
            "t/b.yaml": DEPLOYMENT,
            "t/a.yaml": f"{NAMESPACE}---\n{CONFIGMAP}",
            "t/notes.md": "hello\n",
        },
        target=STRICT,
    )
    assert [(m.identity, m.path, m.line) for m in report.managed] == [
        (("", "Namespace", "", "prod"), "t/a.yaml", 1),
        (("", "ConfigMap", "prod", "settings"), "t/a.yaml", 5),
        (("apps", "Deployment", "prod", "web"), "t/b.yaml", 1),
    ]
    web = report.managed[2]
    expected = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "prod"},
        "spec": {"replicas": 2},
    }
    assert web.digest == document_digest(expected)


def test_only_a_strict_target_pays_for_digests_and_a_cache_without_them_is_read_again() -> None:
    """Digests are for strict targets' approvals alone (a tenth of the gate's time elsewhere):
    a relaxed target's objects carry none, and facts cached without them are read again for
    a strict target, then cached with them."""
    tree = MemoryTree({"t/b.yaml": DEPLOYMENT})
    cache = MemoryFactsCache()
    with tree.snapshot() as snapshot:
        relaxed = run_gate(snapshot, GatePolicy((TargetPolicy("t", "t"),)), cache=cache)
        strict = run_gate(snapshot, GatePolicy((STRICT,)), cache=cache)
        again = run_gate(snapshot, GatePolicy((TargetPolicy("t", "t"),)), cache=cache)
    assert [m.digest for m in relaxed.targets[0].managed] == [""]
    (digest,) = [m.digest for m in strict.targets[0].managed]
    assert len(digest) == 64
    assert [m.digest for m in again.targets[0].managed] == [digest]  # the cache has them now


def test_the_identity_is_written_one_way() -> None:
    assert identity_text(("apps", "Deployment", "prod", "web")) == "Deployment.apps prod/web"
    assert identity_text(("", "ConfigMap", "prod", "settings")) == "ConfigMap prod/settings"
    assert identity_text(("", "Namespace", "", "prod")) == "Namespace _/prod"
    shown = ManagedObject(("rbac.authorization.k8s.io", "ClusterRole", "", "view"), "p", 1, "d")
    assert shown.shown == "ClusterRole.rbac.authorization.k8s.io _/view"


def test_a_duplicate_identity_is_listed_once_where_it_is_first() -> None:
    report = check_target({"t/a.yaml": CONFIGMAP, "t/b.yaml": CONFIGMAP + "data: {x: y}\n"})
    assert [m.path for m in report.managed] == ["t/a.yaml"]


def test_a_kustomization_namespace_is_part_of_the_identity() -> None:
    report = check_target(
        {
            "t/kustomization.yaml": "namespace: other\nresources: [cm.yaml]\n",
            "t/cm.yaml": CONFIGMAP,
        }
    )
    assert [m.identity for m in report.managed] == [("", "ConfigMap", "other", "settings")]


def test_what_is_no_managed_object_is_not_listed() -> None:
    report = check_target(
        {
            "t/.gittargetignore": "ignored/\n",
            "t/ignored/cm.yaml": CONFIGMAP,
            "t/list.yaml": "- a\n- b\n",
            "t/kustomization.yaml": "resources: [patched.yaml]\npatches: [{path: patch.yaml}]\n",
            "t/patched.yaml": DEPLOYMENT,
            "t/patch.yaml": DEPLOYMENT.replace("replicas: 2", "replicas: 3"),
        }
    )
    assert [m.path for m in report.managed] == ["t/patched.yaml"]
