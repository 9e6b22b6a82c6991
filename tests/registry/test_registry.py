"""The registry across sources: identity as a bijection, scale binding, policy, lookups."""

from __future__ import annotations

from bot.registry import RegistryPolicy, Verdict, build_registry
from bot.registry.capabilities import Capabilities
from bot.registry.discovery import ServedType
from bot.registry.policy import DEFAULT_POLICY
from tests.registry.helpers import crd

ALL_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")


def served(
    group: str,
    version: str,
    kind: str,
    resource: str,
    *,
    scope: str | None = "Namespaced",
    verbs: tuple[str, ...] = ALL_VERBS,
    subresources: tuple[str, ...] = (),
    stale: bool = False,
) -> ServedType:
    return ServedType(group, version, kind, resource, scope, verbs, subresources, stale)


def test_a_crd_type_is_followable() -> None:
    registry = build_registry(crds=[crd()])
    record = registry.resolve("example.com", "v1", "Widget")
    assert record.verdict is Verdict.FOLLOWABLE
    assert (record.resource, record.scope, record.origin) == ("widgets", "Namespaced", "crd")
    assert len(record.checks) == 10
    assert record in registry.records()


def test_unknown_gvk_is_refused_not_served() -> None:
    record = build_registry().resolve("example.com", "v1", "Widget")
    assert record.verdict is Verdict.REFUSED
    assert record.summary == (
        "not followable — not-served: example.com/v1 Widget is not served by any source"
    )
    assert record.resource is None and record.origin == "unknown"
    assert [c.requirement for c in record.checks] == ["served"]


def test_wrong_version_names_the_served_ones() -> None:
    registry = build_registry()
    record = registry.resolve("apps", "v1beta1", "Deployment")
    assert record.summary.endswith("(Deployment is served as apps/v1)")
    record = registry.resolve("extensions", "v1beta1", "Ingress")
    assert record.summary == (
        "not followable — not-served: extensions/v1beta1 Ingress is not served by any source "
        "(Ingress is served as networking.k8s.io/v1)"
    )


def test_a_crd_version_that_is_not_served() -> None:
    versions = [
        {"name": "v1", "served": True, "storage": True},
        {"name": "v1alpha1", "served": False, "storage": False},
    ]
    registry = build_registry(crds=[crd(versions=versions)])
    record = registry.resolve("example.com", "v1alpha1", "Widget")
    assert record.checks[0].reason == "not-served"
    assert "crd widgets.example.com declares v1alpha1 with served: false" in record.summary
    assert registry.get("example.com", "v1alpha1", "Widget") is None


def test_subresource_answers_are_refused_as_subresource_only() -> None:
    record = build_registry().resolve("autoscaling", "v1", "Scale")
    assert record.verdict is Verdict.REFUSED
    assert record.summary.startswith("not followable — subresource-only: autoscaling/v1 Scale")
    assert "apps/v1 deployments/scale" in record.summary


def test_catalog_unavailable_is_unknown_for_types_no_source_knows() -> None:
    registry = build_registry(catalog_error="caps.yaml cannot be read")
    record = registry.resolve("example.com", "v1", "Widget")
    assert record.verdict is Verdict.UNKNOWN and not record.followable
    assert record.summary == "not followable — catalog-unavailable: caps.yaml cannot be read"
    # What the built-in data knows is still known.
    assert registry.resolve("apps", "v1", "Deployment").followable


def test_gvk_not_unique_two_crds_one_kind_two_plurals() -> None:
    registry = build_registry(crds=[crd(plural="widgets"), crd(plural="widgetz")])
    record = registry.resolve("example.com", "v1", "Widget")
    assert record.verdict is Verdict.REFUSED
    assert record.summary == "not followable — gvk-not-unique: widgets, widgetz"
    assert record.resource is None
    identity = record.checks[3]
    assert (identity.requirement, identity.reason) == ("identity", "gvk-not-unique")
    assert [r.kind for r in registry.records() if r.group == "example.com"] == ["Widget"]


def test_gvk_not_unique_crd_redefines_a_builtin_with_another_plural() -> None:
    registry = build_registry(crds=[crd("Deployment", "deploys", "apps")])
    record = registry.resolve("apps", "v1", "Deployment")
    assert record.summary == "not followable — gvk-not-unique: deployments, deploys"
    # Other versions and kinds of the group are untouched.
    assert registry.resolve("apps", "v1", "StatefulSet").followable


def test_gvr_not_unique_one_plural_two_kinds() -> None:
    registry = build_registry(crds=[crd("Widget", "widgets"), crd("Gadget", "widgets")])
    for kind in ("Widget", "Gadget"):
        record = registry.resolve("example.com", "v1", kind)
        assert record.summary == "not followable — gvr-not-unique: Gadget, Widget", kind
        assert record.resource == "widgets"


def test_gvr_not_unique_against_a_builtin_resource() -> None:
    capabilities = Capabilities((served("apps", "v1", "Deploy", "deployments"),))
    registry = build_registry(capabilities=capabilities)
    assert registry.resolve("apps", "v1", "Deployment").summary == (
        "not followable — gvr-not-unique: Deploy, Deployment"
    )


def test_the_same_type_from_two_sources_is_one_type() -> None:
    capabilities = Capabilities(
        (
            served("example.com", "v1", "Widget", "widgets"),
            served("apps", "v1", "Deployment", "deployments", subresources=("scale", "status")),
        )
    )
    registry = build_registry(crds=[crd(), crd()], capabilities=capabilities)
    widget = registry.resolve("example.com", "v1", "Widget")
    assert widget.followable and widget.origin == "crd"
    deployment = registry.resolve("apps", "v1", "Deployment")
    assert deployment.followable and deployment.origin == "builtin"
    assert sum(1 for r in registry.records() if r.kind == "Widget") == 1


def test_scope_disagreement_is_scope_unknown() -> None:
    registry = build_registry(
        crds=[crd()],
        capabilities=Capabilities(
            (served("example.com", "v1", "Widget", "widgets", scope="Cluster"),)
        ),
    )
    record = registry.resolve("example.com", "v1", "Widget")
    assert record.scope is None
    assert record.summary == (
        "not followable — scope-unknown: sources disagree: Cluster (capabilities), "
        "Namespaced (crd widgets.example.com)"
    )


def test_missing_watch_from_capabilities() -> None:
    metrics = served("metrics.k8s.io", "v1beta1", "PodMetrics", "pods", verbs=("get", "list"))
    record = build_registry(capabilities=Capabilities((metrics,))).resolve(
        "metrics.k8s.io", "v1beta1", "PodMetrics"
    )
    assert record.origin == "capabilities"
    assert record.summary == "not followable — missing-verb: watch"
    # A pods resource outside the core group is not the denied core pods.
    assert record.checks[7].passed


def test_stale_recorded_discovery_is_discovery_degraded() -> None:
    stale = served("custom.example.io", "v1", "Thing", "things", stale=True)
    record = build_registry(capabilities=Capabilities((stale,))).resolve(
        "custom.example.io", "v1", "Thing"
    )
    assert record.verdict is Verdict.REFUSED
    assert record.summary == (
        "not followable — discovery-degraded: the recorded discovery marks custom.example.io/v1 "
        "as Stale"
    )


def test_scale_binding_for_crds() -> None:
    with_path = crd(
        versions=[
            {
                "name": "v1",
                "served": True,
                "subresources": {"scale": {"specReplicasPath": ".spec.replicas"}},
            }
        ]
    )
    record = build_registry(crds=[with_path]).resolve("example.com", "v1", "Widget")
    assert record.followable and record.checks[9].detail == ".spec.replicas"

    without = crd(versions=[{"name": "v1", "served": True, "subresources": {"scale": {}}}])
    record = build_registry(crds=[without]).resolve("example.com", "v1", "Widget")
    assert record.summary == (
        "not followable — scale-path-unresolved: crd widgets.example.com serves /scale without a "
        "usable specReplicasPath"
    )


def test_scale_from_capabilities_alone_is_unresolved() -> None:
    rollout = served("argoproj.io", "v1alpha1", "Rollout", "rollouts", subresources=("scale",))
    record = build_registry(capabilities=Capabilities((rollout,))).resolve(
        "argoproj.io", "v1alpha1", "Rollout"
    )
    assert record.checks[9].reason == "scale-path-unresolved"


def test_policy_is_configurable() -> None:
    policy = RegistryPolicy(
        denied=DEFAULT_POLICY.denied - {("batch", "jobs")} | {("example.com", "widgets")},
        sensitive=DEFAULT_POLICY.sensitive | {("", "configmaps")},
    )
    registry = build_registry(crds=[crd()], policy=policy)
    assert registry.resolve("batch", "v1", "Job").followable
    assert registry.resolve("example.com", "v1", "Widget").summary == (
        "not followable — denied-by-policy"
    )
    assert registry.resolve("", "v1", "ConfigMap").sensitive


def test_default_policy_matches_the_design() -> None:
    assert DEFAULT_POLICY.denied == {
        ("", "pods"),
        ("", "events"),
        ("events.k8s.io", "events"),
        ("", "endpoints"),
        ("discovery.k8s.io", "endpointslices"),
        ("coordination.k8s.io", "leases"),
        ("apps", "controllerrevisions"),
        ("flowcontrol.apiserver.k8s.io", "flowschemas"),
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"),
        ("batch", "jobs"),
        ("batch", "cronjobs"),
    }
    assert DEFAULT_POLICY.sensitive == {("", "secrets")}


def test_an_unusable_crd_contributes_nothing() -> None:
    broken = crd(name="wrong.example.com")
    assert not broken.usable and broken.problems
    registry = build_registry(crds=[broken])
    assert registry.resolve("example.com", "v1", "Widget").checks[0].reason == "not-served"
