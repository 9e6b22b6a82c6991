"""CRD facts from parsed objects: good ones, v1beta1, and untrusted shapes that never raise."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from bot.registry.crd import CrdVersion, crd_facts
from tests.registry.helpers import crd_object

GOOD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      subresources:
        status: {}
        scale:
          specReplicasPath: .spec.replicas
          statusReplicasPath: .status.replicas
    - name: v1beta1
      served: true
      storage: false
      subresources:
        scale: {statusReplicasPath: .status.replicas}
    - name: v1alpha1
      served: false
      storage: false
"""


def test_good_crd() -> None:
    facts = crd_facts(yaml.safe_load(GOOD))
    assert facts is not None and facts.usable
    assert (facts.name, facts.group, facts.kind, facts.plural, facts.scope) == (
        "widgets.example.com",
        "example.com",
        "Widget",
        "widgets",
        "Namespaced",
    )
    assert facts.versions == (
        CrdVersion("v1", True, True, ".spec.replicas"),
        CrdVersion("v1beta1", True, True, None),
        CrdVersion("v1alpha1", False, False, None),
    )
    assert facts.problems == ("spec.versions[1].subresources.scale.specReplicasPath is missing",)


def test_v1beta1_single_version_default_scope_and_shared_subresources() -> None:
    obj = {
        "apiVersion": "apiextensions.k8s.io/v1beta1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.example.com"},
        "spec": {
            "group": "example.com",
            "version": "v1beta1",
            "names": {"kind": "Gizmo", "plural": "gizmos"},
            "subresources": {"scale": {"specReplicasPath": ".spec.size"}},
        },
    }
    facts = crd_facts(obj)
    assert facts is not None and facts.usable and not facts.problems
    assert facts.scope == "Namespaced"
    assert facts.versions == (CrdVersion("v1beta1", True, True, ".spec.size"),)


def test_not_a_crd() -> None:
    assert crd_facts({"apiVersion": "v1", "kind": "ConfigMap"}) is None
    assert crd_facts({"apiVersion": "example.com/v1", "kind": "CustomResourceDefinition"}) is None
    assert crd_facts(["not", "a", "mapping"]) is None
    assert crd_facts(None) is None


def _with(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    obj = crd_object()
    node = obj
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return obj


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        (("spec",), "text", "spec must be a mapping"),
        (("spec", "group"), 7, "spec.group must be a string"),
        (("spec", "names"), None, "spec.names is missing"),
        (("spec", "names", "plural"), ["x"], "spec.names.plural must be a string"),
        (("metadata",), [], "metadata must be a mapping"),
        (("metadata", "name"), "other.example.com", "metadata.name 'other.example.com' must be"),
    ],
)
def test_malformed_identity_is_unusable(path: tuple[str, ...], value: Any, problem: str) -> None:
    facts = crd_facts(_with(path, value))
    assert facts is not None
    assert not facts.usable
    assert any(p.startswith(problem) for p in facts.problems), facts.problems


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        (("spec", "scope"), "Global", "spec.scope 'Global' is not one of Namespaced, Cluster"),
        (("spec", "versions"), {"name": "v1"}, "spec.versions must be a list"),
        (("spec", "versions"), [5, {"served": True}], "spec.versions[0] must be a mapping"),
        (("spec", "versions"), [{"name": "v1", "served": "yes"}], "spec.versions[0].served"),
        (
            ("spec", "versions"),
            [{"name": "v1", "served": True, "subresources": {"scale": {"specReplicasPath": 3}}}],
            "spec.versions[0].subresources.scale.specReplicasPath 3 is not a dotted path",
        ),
        (
            ("spec", "versions"),
            [
                {
                    "name": "v1",
                    "served": True,
                    "subresources": {"scale": {"specReplicasPath": ".status.replicas"}},
                }
            ],
            "spec.versions[0].subresources.scale.specReplicasPath '.status.replicas'",
        ),
        (
            ("spec", "versions"),
            [{"name": "v1", "served": True, "subresources": {"scale": "on"}}],
            "spec.versions[0].subresources.scale must be a mapping",
        ),
    ],
)
def test_malformed_details_give_a_partial(path: tuple[str, ...], value: Any, problem: str) -> None:
    facts = crd_facts(_with(path, value))
    assert facts is not None
    assert facts.usable  # the identity is intact
    assert any(p.startswith(problem) for p in facts.problems), facts.problems
    assert all(v.spec_replicas_path is None for v in facts.versions)


def test_deeply_nested_garbage_never_raises() -> None:
    junk: Any = {}
    for _ in range(5000):
        junk = {"spec": junk}
    obj = {**crd_object(), "spec": junk}
    facts = crd_facts(obj)
    assert facts is not None and not facts.usable
