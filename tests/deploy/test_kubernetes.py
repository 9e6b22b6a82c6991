"""deploy/kubernetes: what the manifests promise, read from the files (no cluster, no
kubectl), and ``kubectl kustomize`` of the base and of the example overlay when kubectl is
installed."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.gate.content.placement import placement_path
from bot.registry.builtin import builtin_types
from tests.conftest import FIXTURES, ROOT

BASE = ROOT / "deploy" / "kubernetes"
OVERLAY = FIXTURES / "deploy" / "overlay"
NAMESPACE = "ichor"
PLACEMENT = "{namespace}/{group}/{resource}/{name}.yaml"


def managed_files() -> Iterator[tuple[Path, dict[str, Any]]]:
    kustomization = BASE / "kustomization.yaml"
    for rel in yaml.safe_load(kustomization.read_text())["resources"]:
        for doc in yaml.safe_load_all((BASE / rel).read_text()):
            yield BASE / rel, doc


def objects() -> dict[tuple[str, str], dict[str, Any]]:
    return {(doc["kind"], doc["metadata"]["name"]): doc for _, doc in managed_files()}


def pod_specs() -> Iterator[tuple[str, dict[str, Any]]]:
    for (kind, name), doc in objects().items():
        if kind in ("Deployment", "StatefulSet"):
            yield name, doc["spec"]["template"]["spec"]


def test_every_object_sits_on_its_placement_path() -> None:
    types = {(t.group, t.version, t.kind): t for t in builtin_types()}
    for path, doc in managed_files():
        group, _, version = doc["apiVersion"].rpartition("/")
        record = types[(group, version, doc["kind"])]
        expected = placement_path(
            PLACEMENT,
            group=group,
            version=version,
            resource=record.resource,
            namespace=NAMESPACE,
            name=doc["metadata"]["name"],
            namespaced=record.scope == "Namespaced",
            sensitive=False,
        )
        assert path.relative_to(BASE).as_posix() == expected


def test_every_yaml_file_is_listed_or_the_ignored_template() -> None:
    listed = {p.relative_to(BASE).as_posix() for p, _ in managed_files()}
    on_disk = {p.relative_to(BASE).as_posix() for p in BASE.rglob("*.yaml")}
    assert on_disk - listed == {"kustomization.yaml", "ichor-bot.secret-template.yaml"}


def test_pods_run_restricted() -> None:
    specs = dict(pod_specs())
    assert set(specs) == {"ichor-web", "ichor-worker", "ichor-redis"}
    for name, spec in specs.items():
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True and pod["runAsUser"] != 0, name
        assert pod["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert spec["automountServiceAccountToken"] is False, name
        for container in spec["containers"]:
            sc = container["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False, name
            assert sc["readOnlyRootFilesystem"] is True, name
            assert sc["capabilities"] == {"drop": ["ALL"]}, name
            assert {"cpu", "memory"} <= set(container["resources"]["requests"]), name
            assert "/data" in {m["mountPath"] for m in container["volumeMounts"]}, name


def test_web_is_probed_and_workers_scale_by_replicas() -> None:
    found = objects()
    web = found[("Deployment", "ichor-web")]
    assert web["spec"]["replicas"] == 2
    container = web["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    worker = found[("Deployment", "ichor-worker")]["spec"]["template"]["spec"]["containers"][0]
    assert worker["args"] == ["worker"] and worker["image"] == container["image"] == "ichor-bot"
    for pdb in ("ichor-web", "ichor-worker"):
        assert ("PodDisruptionBudget", pdb) in found


def test_redis_keeps_an_append_only_file_on_a_volume() -> None:
    redis = objects()[("StatefulSet", "ichor-redis")]
    args = redis["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--appendonly") + 1] == "yes"
    assert redis["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    config = objects()[("ConfigMap", "ichor-bot")]["data"]
    assert config["ICHOR_REDIS_URL"] == "redis://ichor-redis:6379/0"


def test_the_secret_is_a_template_with_no_values() -> None:
    template = yaml.safe_load((BASE / "ichor-bot.secret-template.yaml").read_text())
    assert template["kind"] == "Secret" and template["metadata"]["name"] == "ichor-bot"
    assert template["stringData"] and set(template["stringData"].values()) == {""}
    assert all(k.startswith("ICHOR_") for k in template["stringData"])
    assert ("Secret", "ichor-bot") not in objects()


def kustomize(directory: Path) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: the manifests are checked from the files above")
    proc = subprocess.run(
        [kubectl, "kustomize", str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [doc for doc in yaml.safe_load_all(proc.stdout) if doc]


def test_kubectl_kustomize_builds_the_base() -> None:
    built = kustomize(BASE)
    kinds = sorted(doc["kind"] for doc in built)
    assert len(built) == len(objects())
    assert kinds.count("Deployment") == 2 and "StatefulSet" in kinds
    for doc in built:
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == NAMESPACE, doc["metadata"]
        assert doc["metadata"]["labels"]["app.kubernetes.io/part-of"] == "ichor-bot"


def test_kubectl_kustomize_builds_the_example_overlay(tmp_path: Path) -> None:
    shutil.copytree(BASE, tmp_path / "base")
    shutil.copytree(OVERLAY, tmp_path / "overlay")
    built = {(doc["kind"], doc["metadata"]["name"]): doc for doc in kustomize(tmp_path / "overlay")}
    assert ("StatefulSet", "ichor-redis") not in built
    config = built[("ConfigMap", "ichor-bot")]["data"]
    assert config["ICHOR_REDIS_URL"].startswith("rediss://redis.platform.example.org")
    worker = built[("Deployment", "ichor-worker")]["spec"]
    assert worker["replicas"] == 4
    image = worker["template"]["spec"]["containers"][0]["image"]
    assert image == "registry.example.com/platform/ichor-bot:0.1.0"
    ingress = built[("Ingress", "ichor-web")]["spec"]
    assert ingress["rules"][0]["host"] == "ichor.platform.example.org"
