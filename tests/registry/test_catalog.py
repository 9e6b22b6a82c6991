"""The catalog of well-known CRD types shipped as package data, and the script that makes it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.registry.builtin import crd_catalog
from bot.registry.catalog import CatalogError, parse_catalog
from tests.conftest import ROOT

DATA = ROOT / "bot" / "registry" / "crd_catalog.json"
SCRIPT = ROOT / "scripts" / "gen_crd_catalog.py"
SOURCES = ROOT / "scripts" / "crd_catalog_sources.json"
# The projects issue 22 names, by the repository their CRDs come from.
REQUIRED = {
    "fluxcd/source-controller",
    "fluxcd/kustomize-controller",
    "fluxcd/helm-controller",
    "fluxcd/notification-controller",
    "argoproj/argo-cd",
    "cert-manager/cert-manager",
    "external-secrets/external-secrets",
    "prometheus-operator/prometheus-operator",
    "kubernetes-sigs/gateway-api",
    "cilium/cilium",
    "istio/istio",
    "traefik/traefik",
    "kyverno/kyverno",
    "vmware-tanzu/velero",
    "longhorn/longhorn",
    "kedacore/keda",
    "cloudnative-pg/cloudnative-pg",
    "crossplane/crossplane",
    "bitnami-labs/sealed-secrets",
    "tektoncd/pipeline",
    "knative/serving",
    "rook/rook",
    "metallb/metallb",
}
SPDX = {"Apache-2.0", "MIT", "AGPL-3.0-only", "AGPL-3.0-or-later"}
CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: {plural}.{group}}}
spec:
  group: {group}
  names: {{kind: {kind}, plural: {plural}}}
  scope: {scope}
  versions:
    - {{name: v1, served: true, storage: true, schema: {{openAPIV3Schema: {{type: object}}}}}}
    - {{name: v1beta1, served: false, storage: false}}
"""


def test_every_required_project_is_there_with_its_provenance() -> None:
    catalog = crd_catalog()
    assert {p.repository for p in catalog.projects} >= REQUIRED
    for project in catalog.projects:
        assert re.fullmatch(r"[0-9a-f]{40}", project.commit), project
        assert project.ref and project.paths and project.license in SPDX, project
    counts = {p.name: 0 for p in catalog.projects}
    for t in catalog.types:
        counts[t.project] += 1
    assert all(counts.values()), counts  # no project without a type
    assert len(catalog.types) >= 300


def test_the_sources_file_is_the_catalogs_provenance() -> None:
    sources = json.loads(SOURCES.read_text(encoding="utf-8"))
    by_name = {p.name: p for p in crd_catalog().projects}
    assert sorted(s["name"] for s in sources) == sorted(by_name)
    for source in sources:
        project = by_name[source["name"]]
        assert (project.repository, project.ref, project.commit, project.license) == (
            source["repository"],
            source["ref"],
            source["commit"],
            source["license"],
        )
        assert list(project.paths) == source["paths"]


def test_types_hold_only_identity_facts_one_per_line() -> None:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    start = lines.index('"types":[') + 1
    rows = lines[start:-1]
    assert len(rows) == len(crd_catalog().types)
    for row in rows:
        entry = json.loads(row.rstrip(","))
        assert set(entry) == {"group", "kind", "plural", "scope", "versions", "project"}
        assert json.dumps(entry, sort_keys=True, separators=(",", ":")) == row.rstrip(",")
        assert all(set(v) == {"name", "served", "storage"} for v in entry["versions"])
    assert DATA.stat().st_size < 150_000  # it ships in the wheel


def test_the_catalog_is_sorted_and_every_type_is_served_somewhere() -> None:
    types = crd_catalog().types
    assert [(t.group, t.kind) for t in types] == sorted((t.group, t.kind) for t in types)
    assert all(t.served_versions() for t in types)
    plurals = [(t.group, t.plural) for t in types]
    assert len(plurals) == len(set(plurals))


@pytest.mark.parametrize(
    "row",
    [
        "helm.toolkit.fluxcd.io/v2 HelmRelease helmreleases Namespaced fluxcd/helm-controller",
        "kustomize.toolkit.fluxcd.io/v1 Kustomization kustomizations Namespaced "
        "fluxcd/kustomize-controller",
        "cert-manager.io/v1 ClusterIssuer clusterissuers Cluster cert-manager/cert-manager",
        "external-secrets.io/v1 ExternalSecret externalsecrets Namespaced "
        "external-secrets/external-secrets",
        "monitoring.coreos.com/v1 ServiceMonitor servicemonitors Namespaced "
        "prometheus-operator/prometheus-operator",
        "argoproj.io/v1alpha1 Application applications Namespaced argoproj/argo-cd",
        "cilium.io/v2 CiliumNetworkPolicy ciliumnetworkpolicies Namespaced cilium/cilium",
    ],
)
def test_well_known_types(row: str) -> None:
    api_version, kind, plural, scope, repository = row.split()
    group, _, version = api_version.partition("/")
    catalog = crd_catalog()
    found = catalog.find(group, kind)
    assert found is not None
    assert (found.plural, found.scope, found.serves(version)) == (plural, scope, True)
    assert catalog.project(found.project).repository == repository


@pytest.mark.parametrize(
    "raw",
    [
        [],
        {"catalog": 2, "projects": [], "types": []},
        {"catalog": 1, "projects": [], "types": [{"group": "g"}]},
        {
            "catalog": 1,
            "projects": [],
            "types": [
                {"group": "g", "kind": "K", "plural": "ks", "scope": "Namespaced",
                 "versions": [], "project": "nowhere"}
            ],
        },
    ],
)  # fmt: skip
def test_a_catalog_of_the_wrong_shape_is_refused(raw: object) -> None:
    with pytest.raises(CatalogError):
        parse_catalog(raw)


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False
    )


def _project(root: Path, name: str, files: dict[str, str]) -> None:
    (root / name).mkdir(parents=True)
    source = {
        "name": name,
        "repository": f"example/{name}",
        "ref": "v1.0.0",
        "commit": "0" * 40,
        "paths": ["crds"],
        "license": "Apache-2.0",
    }
    (root / name / "source.json").write_text(json.dumps(source), encoding="utf-8")
    for path, text in files.items():
        (root / name / path).write_text(text, encoding="utf-8")


def test_build_keeps_the_facts_of_each_crd_and_skips_other_documents(tmp_path: Path) -> None:
    widget = CRD.format(group="example.com", kind="Widget", plural="widgets", scope="Namespaced")
    deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
    _project(tmp_path, "demo", {"all.yaml": widget + "---\n" + deployment, "notes.txt": "x"})
    done = _script("build", str(tmp_path), "--output", "-")
    assert done.returncode == 0, done.stderr
    catalog = parse_catalog(json.loads(done.stdout))
    (widget_type,) = catalog.types
    assert (widget_type.group, widget_type.kind, widget_type.plural) == (
        "example.com",
        "Widget",
        "widgets",
    )
    assert [(v.name, v.served, v.storage) for v in widget_type.versions] == [
        ("v1", True, True),
        ("v1beta1", False, False),
    ]
    assert "openAPIV3Schema" not in done.stdout  # facts only, never the schema


def test_build_refuses_a_kind_claimed_by_two_projects(tmp_path: Path) -> None:
    widget = CRD.format(group="example.com", kind="Widget", plural="widgets", scope="Namespaced")
    _project(tmp_path, "one", {"a.yaml": widget})
    _project(tmp_path, "two", {"b.yaml": widget})
    done = _script("build", str(tmp_path), "--output", "-")
    assert done.returncode == 1
    assert "example.com/Widget is in one and in two" in done.stderr


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_collect_copies_the_manifests_at_the_pinned_commit(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "crds").mkdir(parents=True)
    widget = CRD.format(group="example.com", kind="Widget", plural="widgets", scope="Cluster")
    (work / "crds" / "widgets.yaml").write_text(widget, encoding="utf-8")
    (work / "LICENSE").write_text("\n   Apache License\n   Version 2.0\n", encoding="utf-8")
    _git(work, "init", "-q")
    _git(work, "add", ".")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "crds")
    _git(work, "tag", "v1.0.0")
    commit = _git(work, "rev-parse", "HEAD")
    mirrors = tmp_path / "mirrors"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(work), str(mirrors / "example+demo" / "repo")],
        check=True,
    )
    source = {
        "name": "demo",
        "repository": "example/demo",
        "ref": "v1.0.0",
        "commit": commit,
        "paths": ["crds"],
        "license": "Apache-2.0",
    }
    sources = tmp_path / "sources.json"
    sources.write_text(json.dumps([source]), encoding="utf-8")
    into = tmp_path / "collected"
    args = ["collect", "--mirrors", str(mirrors), "--into", str(into)]
    done = _script(*args, "--sources", str(sources))
    assert done.returncode == 0, done.stderr
    assert (into / "demo" / "crds" / "widgets.yaml").read_text(encoding="utf-8") == widget
    assert json.loads((into / "demo" / "source.json").read_text(encoding="utf-8")) == source
    built = _script("build", str(into), "--output", "-")
    assert built.returncode == 0, built.stderr
    assert parse_catalog(json.loads(built.stdout)).find("example.com", "Widget") is not None

    # A tag that moved, or a licence that is not the declared one, stops the collection.
    sources.write_text(json.dumps([{**source, "commit": "1" * 40}]), encoding="utf-8")
    assert _script(*args, "--sources", str(sources)).returncode == 1
    sources.write_text(json.dumps([{**source, "license": "MIT"}]), encoding="utf-8")
    refused = _script(*args, "--sources", str(sources))
    assert refused.returncode == 1 and "does not begin 'The MIT License'" in refused.stderr
