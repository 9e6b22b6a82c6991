"""kustomization facts: the accepted set, feature codes, and references."""

from __future__ import annotations

import itertools
import posixpath

from bot.gate.content.kustomize import (
    kustomization_facts,
    looks_like_kustomization,
    near_miss,
    near_misses,
    resolve_reference,
)


def test_accepted_fields_only() -> None:
    facts = kustomization_facts(
        {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "namespace": "web",
            "resources": ["a.yaml", "base"],
            "images": [],
            "replicas": [],
            "patches": [{"path": "p.yaml", "target": {"kind": "Deployment"}}],
            "labels": [],
            "commonLabels": {},
            "commonAnnotations": {},
            "buildMetadata": [],
            "generatorOptions": {},
            "sortOptions": {},
            "metadata": {"name": "x"},
        }
    )
    assert facts.features == ()
    assert facts.namespace == "web"
    assert facts.resources == ("a.yaml", "base")
    assert facts.patch_paths == ("p.yaml",)


def test_feature_codes() -> None:
    facts = kustomization_facts(
        {
            "resources": [
                "https://example.com/x.yaml",
                "github.com/org/repo//base?ref=v1",
                "ok.yaml",
            ],
            "components": ["c"],
            "secretGenerator": [],
            "patchesStrategicMerge": [],
            "patches": [{"patch": "inline"}],
            "kind": "Component",
        }
    )
    assert facts.features == (
        "component",
        "components",
        "patches-inline",
        "patchesStrategicMerge",
        "remote-base",
        "secretGenerator",
    )
    assert facts.resources == ("ok.yaml",)


def test_unparseable_shapes() -> None:
    assert kustomization_facts(["not", "a", "mapping"]).features == ("unparseable",)
    assert kustomization_facts({"resources": "a.yaml"}).features == ("unparseable",)
    assert kustomization_facts({"patches": [{"target": {}}]}).features == ("unparseable",)


def test_flux_kustomization_is_not_kustomize() -> None:
    assert looks_like_kustomization({"resources": []})
    assert looks_like_kustomization({"apiVersion": "kustomize.config.k8s.io/v1beta1"})
    assert not looks_like_kustomization(
        {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization"}
    )


def test_resolve_reference() -> None:
    assert resolve_reference("t/apps", "../base") == "t/base"
    assert resolve_reference("t", "./a.yaml") == "t/a.yaml"
    assert resolve_reference("", "a/../b") == "b"
    assert resolve_reference("t", "../..") is None
    assert resolve_reference("t", "/etc/x") is None


def test_near_misses_name_the_field_meant() -> None:
    facts = kustomization_facts(
        {"apiversion": "x", "resource": [], "helmCharts": [], "xyzzy": 1, "kind": "Kustomization"}
    )
    assert facts.features == ("apiversion", "helmCharts", "resource", "xyzzy")
    # A field kustomize knows (helmCharts) is refused as itself, not as a misspelling.
    assert facts.unknown_keys == ("apiversion", "resource", "xyzzy")
    assert near_misses(facts) == {"apiversion": "apiVersion", "resource": "resources"}
    assert near_miss("NAMESPACE") == "namespace"  # kustomize ignores the case of field names
    assert near_miss("x" * 101) is None
    assert near_miss(3) is None


def test_near_misses_are_bounded() -> None:
    doc: dict[str, object] = {f"resources{i}": [] for i in range(1000)}
    assert len(near_misses(kustomization_facts(doc))) == 10


def test_resolve_reference_agrees_with_normpath() -> None:
    # The fast path for references with nothing to normalise must give normpath's answer.
    parts = ["", "a", ".", "..", "b.yaml", "..x", ".h", "c/"]
    refs = {"/".join(p) for n in range(1, 4) for p in itertools.product(parts, repeat=n)}
    refs |= {"a//b", "./a", "a/./b", "a/..", "../a", "a/", "/abs", ""}
    for directory in ("", "t", "t/app"):
        for ref in refs:
            joined = posixpath.normpath(posixpath.join(directory, ref))
            expected: str | None = "" if joined == "." else joined
            if ref.startswith("/") or joined == ".." or joined.startswith("../"):
                expected = None
            assert resolve_reference(directory, ref) == expected, (directory, ref)
