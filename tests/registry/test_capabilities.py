"""Capabilities files: recorded discovery documents and the kubectl api-resources table."""

from __future__ import annotations

import json

import pytest

from bot.errors import IchorError
from bot.registry import CapabilitiesError, build_registry, parse_capabilities
from bot.registry.discovery import ServedType
from tests.conftest import FIXTURES

ALL = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


def fixture(name: str) -> bytes:
    return (FIXTURES / "registry" / name).read_bytes()


def by_key(types: tuple[ServedType, ...]) -> dict[tuple[str, str, str], ServedType]:
    return {(t.group, t.version, t.kind): t for t in types}


def test_aggregated_discovery() -> None:
    caps = parse_capabilities(fixture("aggregated-discovery.json"))
    types = by_key(caps.types)
    deployment = types[("apps", "v1", "Deployment")]
    assert deployment.resource == "deployments" and deployment.scope == "Namespaced"
    assert deployment.subresources == ("scale", "status") and deployment.verbs == ALL
    assert types[("metrics.k8s.io", "v1beta1", "PodMetrics")].verbs == ("get", "list")
    assert types[("custom.metrics.k8s.io", "v1beta2", "MetricValueList")].stale
    assert not types[("argoproj.io", "v1alpha1", "Rollout")].stale
    answers = {(a.group, a.version, a.kind, a.via) for a in caps.subresource_kinds}
    assert ("autoscaling", "v1", "Scale", "argoproj.io/v1alpha1 rollouts/scale") in answers


def test_aggregated_discovery_in_the_registry() -> None:
    registry = build_registry(capabilities=parse_capabilities(fixture("aggregated-discovery.json")))
    assert registry.resolve("metrics.k8s.io", "v1beta1", "PodMetrics").summary == (
        "not followable — missing-verb: watch"
    )
    rollout = registry.resolve("argoproj.io", "v1alpha1", "Rollout")
    assert rollout.origin == "capabilities"
    assert rollout.checks[9].reason == "scale-path-unresolved"
    assert registry.resolve("apps", "v1", "Deployment").followable


def test_legacy_resource_list_in_yaml() -> None:
    caps = parse_capabilities(fixture("api-v1-resources.yaml"))
    types = by_key(caps.types)
    assert set(types) == {
        ("", "v1", "ConfigMap"),
        ("", "v1", "Pod"),
        ("", "v1", "ReplicationController"),
    }
    assert types[("", "v1", "Pod")].subresources == ("eviction", "status")
    assert types[("", "v1", "ReplicationController")].subresources == ("scale",)
    answers = {(a.group, a.version, a.kind) for a in caps.subresource_kinds}
    assert answers == {("policy", "v1", "Eviction"), ("autoscaling", "v1", "Scale")}


def test_a_list_of_documents() -> None:
    aggregated = json.loads(fixture("aggregated-discovery.json"))
    legacy = {
        "kind": "APIResourceList",
        "groupVersion": "v1",
        "resources": [{"name": "secrets", "kind": "Secret", "namespaced": True, "verbs": ALL}],
    }
    caps = parse_capabilities(json.dumps([aggregated, legacy]).encode())
    assert ("", "v1", "Secret") in by_key(caps.types)
    stream = fixture("api-v1-resources.yaml") + b"\n---\n" + json.dumps(legacy).encode()
    assert ("", "v1", "Secret") in by_key(parse_capabilities(stream).types)


def test_kubectl_api_resources_wide_table() -> None:
    caps = parse_capabilities(fixture("api-resources-wide.txt"))
    assert caps.form == "api-resources"
    types = by_key(caps.types)
    assert len(types) == 9
    binding = types[("", "v1", "Binding")]
    assert binding.verbs == ("create",) and binding.scope == "Namespaced"
    nodes = types[("metrics.k8s.io", "v1beta1", "NodeMetrics")]
    assert (nodes.resource, nodes.scope, nodes.verbs) == ("nodes", "Cluster", ("get", "list"))
    release = types[("helm.toolkit.fluxcd.io", "v2", "HelmRelease")]
    assert release.verbs == ALL and release.resource == "helmreleases"

    registry = build_registry(capabilities=caps)
    assert registry.resolve("metrics.k8s.io", "v1beta1", "PodMetrics").summary == (
        "not followable — missing-verb: watch"
    )
    assert registry.resolve("helm.toolkit.fluxcd.io", "v2", "HelmRelease").followable


def test_table_with_comma_separated_verbs() -> None:
    # Newer kubectl joins the verbs with commas instead of printing a Go slice.
    table = (
        "NAME         SHORTNAMES   APIVERSION   NAMESPACED   KIND        "
        "VERBS            CATEGORIES\n"
        "configmaps   cm           v1           true         ConfigMap   get,list,watch   \n"
        "widgets                   x.io/v1      false        Widget      get,list         \n"
    )
    types = by_key(parse_capabilities(table.encode()).types)
    assert types[("", "v1", "ConfigMap")].verbs == ("get", "list", "watch")
    assert types[("x.io", "v1", "Widget")].scope == "Cluster"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "NAME   SHORTNAMES   APIVERSION   NAMESPACED   KIND\nbindings   v1   true   Binding\n",
            "kubectl api-resources table: line 1: the header lacks the column(s) VERBS",
        ),
        (
            "NAME   SHORTNAMES   APIGROUP   NAMESPACED   KIND   VERBS\n",
            "line 1: the table has APIGROUP but no APIVERSION column",
        ),
        (
            "NAME       SHORTNAMES   APIVERSION   NAMESPACED   KIND       VERBS\n"
            "bindings                v1           maybe        Binding    [create]\n",
            "kubectl api-resources table: line 2: NAMESPACED 'maybe' is not true or false",
        ),
        (
            "NAME       SHORTNAMES   APIVERSION   NAMESPACED   KIND       VERBS\n"
            "\n"
            "bindings                v1           true         Binding    [create\n",
            "kubectl api-resources table: line 3: VERBS '[create' has an unbalanced bracket",
        ),
        (
            "NAME       SHORTNAMES   APIVERSION   NAMESPACED   KIND       VERBS\n"
            "averyveryverylongname   v1           true         Binding    [create]\n",
            "line 2: the SHORTNAMES column does not start where the header says",
        ),
    ],
)
def test_table_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(CapabilitiesError) as caught:
        parse_capabilities(text.encode())
    assert str(caught.value).startswith(message) or message in str(caught.value)
    assert isinstance(caught.value, IchorError)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the file holds no discovery document"),
        (b'{\n  "kind": "APIResourceList",\n  oops\n}', "line 3: not valid JSON"),
        (b"a: [1, 2\nb: 3\n", "not valid YAML"),
        (b"apiVersion: v1\nkind: ConfigMap\n", "not recorded discovery"),
        (b"\xff\xfe\x00garbage", "line 1: the file is not UTF-8 text"),
        (
            b"kind: APIResourceList\ngroupVersion: v1\nresources:\n  - name: pods\n"
            b"    kind: Pod\n    verbs: get\n",
            "line 6: resources[0].verbs: must be a list of strings",
        ),
        (
            b"apiVersion: apidiscovery.k8s.io/v2\nkind: APIGroupDiscoveryList\nitems:\n"
            b"  - metadata: {name: apps}\n    versions:\n      - version: v1\n"
            b"        resources:\n          - responseKind: {kind: Deployment}\n",
            "line 8: items[0].versions[0].resources[0].resource: must be a non-empty string",
        ),
        (
            b"apiVersion: apidiscovery.k8s.io/v1\nkind: APIGroupDiscoveryList\nitems: []\n",
            "line 1: apiVersion: 'apidiscovery.k8s.io/v1' is not one of",
        ),
    ],
)
def test_unparseable_files(data: bytes, message: str) -> None:
    with pytest.raises(CapabilitiesError) as caught:
        parse_capabilities(data)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_alias_expansion_is_bounded() -> None:
    # 100 groups x 100 versions x 100 resources from a few lines of aliases.
    resource = "{resource: things, responseKind: {kind: Thing}, verbs: [get]}"
    lines = [
        "apiVersion: apidiscovery.k8s.io/v2",
        "kind: APIGroupDiscoveryList",
        f"r: &r {resource}",
        "v: &v {version: v1, resources: [" + ", ".join(["*r"] * 100) + "]}",
        "g: &g {metadata: {name: x.io}, versions: [" + ", ".join(["*v"] * 100) + "]}",
        "items: [" + ", ".join(["*g"] * 100) + "]",
    ]
    with pytest.raises(CapabilitiesError, match="more than 20000 resources"):
        parse_capabilities("\n".join(lines).encode())
