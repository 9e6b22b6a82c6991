"""deploy/kubernetes: what the manifests promise, read from the files (no cluster, no
kubectl), and ``kubectl kustomize`` of the base and of the example overlay when kubectl is
installed."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from bot.gate.content.placement import placement_path
from bot.registry.builtin import builtin_types
from bot.settings import Settings
from bot.web.auth import OPEN_PREFIXES
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


def _redis_script() -> str:
    container = objects()[("StatefulSet", "ichor-redis")]["spec"]["template"]["spec"]
    [redis] = container["containers"]
    assert redis["command"] == ["sh", "-c"]
    script: str = redis["args"][0]
    return script


def test_redis_keeps_an_append_only_file_on_a_volume() -> None:
    redis = objects()[("StatefulSet", "ichor-redis")]
    words = _redis_script().split()
    assert words[words.index("--appendonly") + 1] == "yes"
    assert words[words.index("--dir") + 1] == "/data"
    assert redis["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    config = objects()[("ConfigMap", "ichor-bot")]["data"]
    assert config["ICHOR_REDIS_URL"] == "redis://ichor-redis:6379/0"  # the password is apart


def test_redis_takes_its_password_from_the_secret() -> None:
    [redis] = objects()[("StatefulSet", "ichor-redis")]["spec"]["template"]["spec"]["containers"]
    sources = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in redis["env"]}
    wanted = {"name": "ichor-bot", "key": "ICHOR_REDIS_PASSWORD"}
    assert sources == {"REDIS_PASSWORD": wanted, "REDISCLI_AUTH": wanted}
    assert redis["readinessProbe"]["exec"]["command"] == ["redis-cli", "ping"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_the_redis_script_refuses_no_password_and_then_asks_for_it(tmp_path: Path) -> None:
    """The StatefulSet's own script, run with a real redis-server on a free port."""
    port = _free_port()
    script = _redis_script().replace("--dir /data", f"--dir {tmp_path} --port {port} --save ''")
    env = {"PATH": os.environ["PATH"]}
    empty = subprocess.run(
        ["sh", "-c", script],
        env={**env, "REDIS_PASSWORD": ""},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert empty.returncode == 1 and "set ICHOR_REDIS_PASSWORD" in empty.stderr
    server = subprocess.Popen(
        ["sh", "-c", script],
        env={**env, "REDIS_PASSWORD": "s3cret"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        client = redis.Redis(port=port, socket_connect_timeout=1)
        authed = redis.Redis(port=port, password="s3cret", socket_connect_timeout=1)
        for _ in range(300):  # bounded: redis-server starts in milliseconds
            try:
                assert authed.ping()
                break
            except redis.exceptions.ConnectionError:
                server.poll()
                assert server.returncode is None, "redis-server exited"
                time.sleep(0.02)
        with pytest.raises(redis.exceptions.AuthenticationError):
            client.ping()
        assert "s3cret" not in Path(f"/proc/{server.pid}/cmdline").read_text()
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_workers_are_probed_by_the_file_their_heartbeat_touches() -> None:
    spec = objects()[("Deployment", "ichor-worker")]["spec"]["template"]["spec"]
    [worker] = spec["containers"]
    env = {e["name"]: e["value"] for e in worker["env"]}
    alive = env["ICHOR_WORKER_ALIVE_FILE"]
    assert alive.startswith("/tmp/")  # a writable emptyDir under a read-only root
    ready = worker["readinessProbe"]["exec"]["command"]
    live = worker["livenessProbe"]["exec"]["command"]
    assert ready[:4] == live[:4] == ["python", "-m", "bot.cli.probe", alive]
    # Restarted only after longer than the Redis outage a worker rides out.
    assert float(live[4]) > Settings().redis_outage > float(ready[4])


def test_the_secret_is_a_template_with_no_values() -> None:
    template = yaml.safe_load((BASE / "ichor-bot.secret-template.yaml").read_text())
    assert template["kind"] == "Secret" and template["metadata"]["name"] == "ichor-bot"
    assert template["stringData"] and set(template["stringData"].values()) == {""}
    assert all(k.startswith("ICHOR_") for k in template["stringData"])
    assert {"ICHOR_REDIS_PASSWORD", "ICHOR_STATUS_AUTH"} <= set(template["stringData"])
    # Every key is a setting the bot reads (Redis's password is the bundled Redis's too).
    assert {k.removeprefix("ICHOR_").lower() for k in template["stringData"]} <= set(
        Settings.model_fields
    )
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


def test_kubectl_kustomize_routes_only_webhooks_and_the_api() -> None:
    built = {(d["kind"], d["metadata"]["name"]): d for d in kustomize(BASE)}
    [rule] = built[("Ingress", "ichor-web")]["spec"]["rules"]
    paths = {(p["path"], p["pathType"]) for p in rule["http"]["paths"]}
    # No /, /metrics or /setup: only what the web process serves without ICHOR_STATUS_AUTH.
    assert paths == {("/webhooks/", "Prefix"), ("/api/v1/", "Prefix")}
    assert {path for path, _ in paths} == set(OPEN_PREFIXES)
    for name in ("ichor-web", "ichor-worker"):
        [container] = built[("Deployment", name)]["spec"]["template"]["spec"]["containers"]
        assert {"secretRef": {"name": "ichor-bot"}} in container["envFrom"], name


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
