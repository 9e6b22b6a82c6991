"""bot.yaml.edit on real files: nodes replaced (merged, so comments stay) and documents removed.

As in test_edits.py, every case states exactly what changes, runs through the round trip and
through the line edits alone (`mode`), and is read back by PyYAML (libyaml) and ruamel.yaml.
"""

from __future__ import annotations

import pytest

from bot.yaml.edit import remove_document, replace_node
from tests.support.yaml_edits import (
    Case,
    assert_reads,
    fixture,
    hunks,
    mode,
    parse_cases,
    readings,
    without_lines,
)

__all__ = ["mode"]  # a fixture, used by name

REPLACEMENTS_TEXT = r"""
== flux2-podinfo-release.yaml 0 replace spec.values.httpRoute = {"enabled": true, "parentRefs":
[{"name": "envoy", "namespace": "envoy-gateway-system", "sectionName": "http"}], "hostnames":
["podinfo.example.com"], "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}]}
@35
-        - podinfo.local
+        - podinfo.example.com
== sulibot-grafana-ks.yaml 2 replace spec.dependsOn = [{"name": "grafana"}, {"name":
"storage-ready", "namespace": "flux-system"}]
@71
-    - name: volsync
-      namespace: flux-system
== xunholy-home-assistant-httproute.yaml 1 replace metadata = {"name": "home-assistant-code",
"namespace": "home-system", "annotations": {"external-dns.alpha.kubernetes.io/external": "true"}}
@32
+  annotations:
+    external-dns.alpha.kubernetes.io/external: "true"
== bjws-cilium-ks.yaml 0 replace [] = {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind":
"Kustomization", "metadata": {"name": "cilium"}, "spec": {"interval": "30m", "path":
"./kubernetes/apps/kube-system/cilium/app", "prune": true, "sourceRef": {"kind": "GitRepository",
"name": "flux-system", "namespace": "flux-system"}, "targetNamespace": "kube-system", "wait":
true}}
@8
-  interval: 1h
+  interval: 30m
@16
+  wait: true
== flux2-podinfo-release.yaml 0 replace spec.install = {"remediation": {"retries": 3}}
@16
-    strategy:
-      name: RetryOnFailure
+    remediation:
+      retries: 3
== flux2-podinfo-release.yaml 0 replace spec = {"interval": "1h", "releaseName": "podinfo",
"chart": {"spec": {"chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name":
"podinfo"}}}, "install": {"strategy": {"name": "RetryOnFailure"}}, "upgrade": {"strategy":
{"name": "RetryOnFailure"}}, "values": {"redis": {"enabled": true, "repository":
"public.ecr.aws/docker/library/redis", "tag": "8.6.3"}, "httpRoute": {"enabled": true,
"parentRefs": [{"name": "envoy", "namespace": "envoy-gateway-system", "sectionName": "http"}],
"hostnames": ["podinfo.local"], "rules": [{"matches": [{"path": {"type": "PathPrefix", "value":
"/"}}]}]}}}
@7
-  interval: 50m
+  interval: 1h
@27
-      tag: 8.6.2
+      tag: 8.6.3
== sulibot-grafana-ks.yaml 2 replace spec.postBuild.substitute = {"APP": "grafana",
"VOLSYNC_SCHEDULE": "4 * * * *", "VOLSYNC_SOURCE_PVC": "grafana-pvc", "VOLSYNC_CAPACITY": "10Gi",
"VOLSYNC_STORAGECLASS": "csi-cephfs-config-sc", "VOLSYNC_SNAPSHOTCLASS":
"csi-cephfs-config-snapclass"}
@82
-      VOLSYNC_SCHEDULE: "2 * * * *"
+      VOLSYNC_SCHEDULE: "4 * * * *"
@87
-      VOLSYNC_CACHE_STORAGECLASS: csi-cephfs-config-sc
== sulibot-bgp.yaml 2 replace spec.transport = {"peerPort": 1179}
@54
-    peerPort: 179
+    peerPort: 1179
== sulibot-probes.yaml 3 replace spec.metricRelabelings = [{"targetLabel": "service",
"replacement": "nfs-gateway-tcp", "action": "replace"}]
@90
-    - targetLabel: component
-      replacement: nfs-gateway
-      action: replace
== sulibot-atuin-helmrelease.yaml 0 replace spec.values.persistence.config = {"enabled": true,
"existingClaim": "atuin-config", "globalMounts": [{"path": "/config"}]}
@90
-        existingClaim: "{{ .Release.Name }}-config"
+        existingClaim: "atuin-config"
+        globalMounts:
+          - path: /config
"""
REPLACEMENTS = parse_cases(REPLACEMENTS_TEXT)


@pytest.mark.parametrize("case", REPLACEMENTS, ids=str)
def test_real_file_replacement(case: Case, mode: str) -> None:
    before = fixture(case.fixture)
    after = replace_node(before, document=case.document, path=case.path, value=case.value)
    assert hunks(before, after) == case.diff
    assert_reads(after, case.document, case.path, case.value)


# (fixture, document, the lines it owns (1-based, inclusive) or None: nothing would be left)
REMOVALS: list[tuple[str, int, tuple[int, int] | None]] = [
    ("flux2-infrastructure.yaml", 0, (1, 16)),
    ("flux2-infrastructure.yaml", 1, (17, 41)),
    ("flux2-apps.yaml", 0, None),
    ("sulibot-bgp.yaml", 0, (1, 20)),
    ("sulibot-bgp.yaml", 1, (21, 36)),
    ("sulibot-bgp.yaml", 2, (37, 75)),
    ("sulibot-probes.yaml", 0, (1, 29)),
    ("sulibot-probes.yaml", 2, (49, 67)),
    ("sulibot-pod-reaper-rbac.yaml", 0, (1, 6)),
    ("sulibot-grafana-ks.yaml", 1, (28, 52)),
    ("xunholy-home-assistant-httproute.yaml", 1, (25, 46)),
    ("xunholy-crossplane-providers.yaml", 3, (25, 32)),
    ("xunholy-crossplane-providers.yaml", 0, (1, 8)),
    ("xunholy-scrapeconfig.yaml", 2, (31, 47)),
    ("bjws-cilium-ks.yaml", 2, (31, 45)),
    ("sulibot-platform.yaml", 0, None),
    ("sulibot-probes.yaml", 3, (68, 92)),
    ("sulibot-probes.yaml", 1, (30, 48)),
    ("sulibot-grafana-ks.yaml", 0, (1, 27)),
    ("sulibot-grafana-ks.yaml", 2, (53, 94)),
    ("sulibot-pod-reaper-rbac.yaml", 1, (7, 17)),
    ("sulibot-pod-reaper-rbac.yaml", 2, (18, 30)),
    ("xunholy-home-assistant-httproute.yaml", 2, (47, 78)),
    ("bjws-cilium-ks.yaml", 0, (1, 15)),
]


@pytest.mark.parametrize(("name", "document", "owned"), REMOVALS, ids=lambda v: str(v))
def test_real_file_document_removal(
    name: str, document: int, owned: tuple[int, int] | None, mode: str
) -> None:
    before = fixture(name)
    after = remove_document(before, document=document)
    if owned is None:
        assert after is None
        return
    assert after == without_lines(before, *owned)
    # A document owns its `---` and every line to the next one: its comments go with it.
    assert before.splitlines()[owned[0] - 1] == b"---"
    for old, new in zip(readings(before), readings(after), strict=True):
        assert new == old[:document] + old[document + 1 :]


def test_removals_cover_first_middle_and_last_documents() -> None:
    counts = {name: len(readings(fixture(name))[0]) for name, _, _ in REMOVALS}
    places = {
        "first" if d == 0 else "last" if d == counts[n] - 1 else "middle"
        for n, d, owned in REMOVALS
        if owned is not None
    }
    assert places == {"first", "middle", "last"}
    assert len(REPLACEMENTS) == REPLACEMENTS_TEXT.count("\n== ")
