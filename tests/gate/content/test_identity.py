"""bot.gate.content.identity: identities as kustomize builds them."""

from __future__ import annotations

from bot.gate.content.facts import ObjectFacts
from bot.gate.content.identity import object_identity


def obj(api_version: str, kind: str, name: str, namespace: str | None = None) -> ObjectFacts:
    return ObjectFacts(api_version, kind, name, namespace, sops=False, identity_encrypted=False)


SET = {"apps/cm/namespace.yaml": "cert-manager"}


def test_a_core_namespace_is_named_by_the_kustomization_namespace() -> None:
    found = object_identity("apps/cm/namespace.yaml", obj("v1", "Namespace", "_"), "Cluster", SET)
    assert found == ("", "Namespace", "", "cert-manager")


def test_a_namespace_no_kustomization_reaches_keeps_its_name() -> None:
    found = object_identity("loose.yaml", obj("v1", "Namespace", "_"), "Cluster", SET)
    assert found == ("", "Namespace", "", "_")


def test_a_namespace_kind_of_another_group_is_namespaced_like_any_unknown_kind() -> None:
    # kustomize renames only the core Namespace; it gives an unknown kind the namespace.
    other = obj("example.com/v1", "Namespace", "w")
    found = object_identity("apps/cm/namespace.yaml", other, None, SET)
    assert found == ("example.com", "Namespace", "cert-manager", "w")


def test_the_kustomization_namespace_replaces_the_objects_own() -> None:
    cm = obj("v1", "ConfigMap", "settings", "elsewhere")
    assert object_identity("apps/cm/namespace.yaml", cm, "Namespaced", SET)[2] == "cert-manager"
    assert object_identity("other.yaml", cm, "Namespaced", SET)[2] == "elsewhere"


def test_cluster_scoped_types_have_no_namespace() -> None:
    role = obj("rbac.authorization.k8s.io/v1", "ClusterRole", "reader", "ignored")
    found = object_identity("apps/cm/namespace.yaml", role, "Cluster", SET)
    assert found == ("rbac.authorization.k8s.io", "ClusterRole", "", "reader")
