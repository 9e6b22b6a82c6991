"""bot.yaml.edit on real files: leaves set and added, every changed line asserted byte for byte.

The fixtures are copies of files from four public GitOps repositories (fixtures/yaml_edits/
README.md names each source). Each case states the lines difflib finds changed, so every other
byte is asserted unchanged. Every edit runs twice (`mode`): through ruamel.yaml's round trip,
as normal, and with the line edits alone, the fallback; both must give exactly these bytes,
and PyYAML (libyaml) and ruamel.yaml must both read the new value.
"""

from __future__ import annotations

import pytest

from bot.yaml.edit import add_leaf, set_leaf, set_or_add_leaf
from tests.support.yaml_edits import Case, assert_reads, fixture, hunks, mode, parse_cases

__all__ = ["mode"]  # a fixture, used by name

OPS = {"set": set_leaf, "add": add_leaf, "set_or_add": set_or_add_leaf}

CASES_TEXT = r"""
== flux2-podinfo-release.yaml 0 set spec.interval = "1h"
@7
-  interval: 50m
+  interval: 1h
== flux2-podinfo-release.yaml 0 set spec.values.redis.tag = "8.6.3"
@27
-      tag: 8.6.2
+      tag: 8.6.3
== flux2-podinfo-release.yaml 0 set spec.values.redis.enabled = false
@25
-      enabled: true
+      enabled: false
== flux2-podinfo-release.yaml 0 add metadata.annotations = {"ichor.io/approved": "true"}
@6
+  annotations:
+    ichor.io/approved: "true"
== flux2-podinfo-release.yaml 0 set spec.values.httpRoute.parentRefs.0.sectionName = "https"
@33
-          sectionName: http
+          sectionName: https
== flux2-podinfo-values.yaml 0 set spec.chart.spec.version = ">=2.0.0"
@9
-      version: ">=1.0.0-alpha"
+      version: ">=2.0.0"
== flux2-podinfo-values.yaml 0 set spec.test.enable = true
@11
-    enable: false
+    enable: true
== flux2-podinfo-values.yaml 0 add spec.values.httpRoute.enabled = true
@16
+      enabled: true
== flux2-infrastructure.yaml 1 set spec.patches.0.target.name = "letsencrypt-staging"
@41
-        name: letsencrypt
+        name: letsencrypt-staging
== flux2-infrastructure.yaml 0 add spec.suspend = false
@17
+  suspend: false
== flux2-apps.yaml 0 set spec.dependsOn.0.name = "infra-configs-v2"
@9
-    - name: infra-configs
+    - name: infra-configs-v2
== flux2-apps.yaml 0 set_or_add spec.suspend = true
@19
+  suspend: true
== flux2-apps.yaml 0 set_or_add spec.wait = false
@18
-  wait: true
+  wait: false
== sulibot-bgp.yaml 0 set spec.advertisements.0.attributes.communities.large.0 =
"4200001000:0:300"
@19
-            - "4200001000:0:200" # CL_K8S_PUBLIC
+            - "4200001000:0:300" # CL_K8S_PUBLIC
== sulibot-bgp.yaml 2 set spec.timers.holdTimeSeconds = 90
@47
-    holdTimeSeconds: 9
+    holdTimeSeconds: 90
== sulibot-bgp.yaml 2 add spec.transport.peerAddress = "fd00:255::1"
@55
+    peerAddress: fd00:255::1
== sulibot-bgp.yaml 1 set spec.advertisements.0.advertisementType = "Service"
@31
-    - advertisementType: "PodCIDR"
+    - advertisementType: "Service"
== sulibot-probes.yaml 3 set spec.interval = "30s"
@78
-  interval: 15s
+  interval: 30s
== sulibot-probes.yaml 0 add spec.interval = "30s"
@30
+  interval: 30s
== sulibot-probes.yaml 1 set spec.targets.staticConfig.static = ["2606:4700:4700::1111",
"2001:4860:4860::8888"]
@45
+        - 2001:4860:4860::8888
== sulibot-pod-reaper-rbac.yaml 1 set rules.0.verbs = ["get", "list", "watch", "delete"]
@17
-    verbs: ["get", "list", "delete"]
+    verbs: ["get", "list", "watch", "delete"]
== sulibot-pod-reaper-rbac.yaml 2 set subjects.0.namespace = "observability"
@30
-    namespace: kube-system
+    namespace: observability
== sulibot-atuin-helmrelease.yaml 0 set spec.values.controllers.atuin.containers.app.image.tag =
"18.17.0"
@31
-              tag: 18.16.1@sha256:9d4d79507b51be6d292b218f5cc791d79ca0a72f51ab48f786b091bd6eafb39f
+              tag: 18.17.0
== sulibot-atuin-helmrelease.yaml 0 add
spec.values.controllers.atuin.containers.app.securityContext.capabilities.add =
["NET_BIND_SERVICE"]
@62
-              capabilities: {drop: ["ALL"]}
+              capabilities: {drop: ["ALL"], add: [NET_BIND_SERVICE]}
== sulibot-atuin-helmrelease.yaml 0 set
spec.values.controllers.atuin.containers.app.securityContext.capabilities.drop = ["NET_RAW"]
@62
-              capabilities: {drop: ["ALL"]}
+              capabilities: {drop: ["NET_RAW"]}
== sulibot-atuin-helmrelease.yaml 0 set
spec.values.controllers.atuin.containers.app.env.ATUIN_OPEN_REGISTRATION = "false"
@40
-              ATUIN_OPEN_REGISTRATION: "true"
+              ATUIN_OPEN_REGISTRATION: "false"
== sulibot-atuin-helmrelease.yaml 0 set spec.values.controllers.atuin.containers.app.env.TZ =
"Europe/Paris"
@41
-              TZ: America/Los_Angeles
+              TZ: Europe/Paris
== sulibot-flux-system-kustomization.yaml 0 set resources = ["gotk-components.yaml",
"gotk-sync.yaml", "cluster-vars.yaml"]
@6
+- cluster-vars.yaml
== sulibot-flux-system-kustomization.yaml 0 add namespace = "flux-system"
@54
+namespace: flux-system
== sulibot-flux-system-kustomization.yaml 0 set patches.1.target.name = "helm-controller-v2"
@53
-      name: helm-controller
+      name: helm-controller-v2
== sulibot-grafana-ks.yaml 0 add metadata.labels.tier = "1"
@12
+    tier: "1"
== sulibot-grafana-ks.yaml 2 set spec.postBuild.substitute.VOLSYNC_CAPACITY = "20Gi"
@84
-      VOLSYNC_CAPACITY: 10Gi
+      VOLSYNC_CAPACITY: 20Gi
== sulibot-grafana-ks.yaml 0 set spec.wait = false
@27
-  wait: true
+  wait: false
== xunholy-home-assistant-httproute.yaml 0 set ["metadata", "annotations",
"external-dns.alpha.kubernetes.io/external"] = "false"
@9
-    external-dns.alpha.kubernetes.io/external: 'true'
+    external-dns.alpha.kubernetes.io/external: 'false'
== xunholy-home-assistant-httproute.yaml 2 set spec.rules.0.matches.0.path.value =
"/oauth2/callback"
@73
-            value: /oauth2/
+            value: /oauth2/callback
== xunholy-crossplane-providers.yaml 3 set spec.package =
"xpkg.upbound.io/coopnorge/provider-github:v0.13.0"
@32
-  package: xpkg.upbound.io/coopnorge/provider-github:v0.12.0
+  package: xpkg.upbound.io/coopnorge/provider-github:v0.13.0
== xunholy-scrapeconfig.yaml 2 set spec.staticConfigs.0.targets = ["jetkvm-01.internal",
"jetkvm-02.internal", "jetkvm-03.internal", "jetkvm-04.internal"]
@43
+        - jetkvm-04.internal
== bjws-cilium-ks.yaml 1 set spec.path = "./kubernetes/apps/kube-system/cilium/config-v2"
@24
-  path: "./kubernetes/apps/kube-system/cilium/config"
+  path: "./kubernetes/apps/kube-system/cilium/config-v2"
== bjws-freshrss-helmrelease.yaml 0 set ["spec", "values", "controllers", "freshrss",
"annotations", "reloader.stakater.com/auto"] = "false"
@16
-          reloader.stakater.com/auto: "true"
+          reloader.stakater.com/auto: "false"
== bjws-freshrss-helmrelease.yaml 0 set spec.values.controllers.freshrss.containers.app.image.tag
= "1.29.2-alpine"
@23
-              tag: 1.29.1-alpine
+              tag: 1.29.2-alpine
== bjws-selfhosted-kustomization.yaml 0 set namespace = "self-hosted"
@5
-namespace: selfhosted
+namespace: self-hosted
== bjws-selfhosted-kustomization.yaml 0 set components = ["../../components/flux-alerts",
"../../components/namespace"]
@8
-  - ../../components/kopiur/secret
== bjws-selfhosted-kustomization.yaml 0 add labels = [{"pairs": {"app.kubernetes.io/part-of":
"selfhosted"}}]
@31
+labels:
+  - pairs:
+      app.kubernetes.io/part-of: selfhosted
== sulibot-referencegrant-media.yaml 0 set spec.to.0.kind = "ServiceImport"
@13
-      kind: Service
\ No newline at end of file
+      kind: ServiceImport
\ No newline at end of file
== sulibot-referencegrant-media.yaml 0 add spec.to.0.name = "media"
@13
-      kind: Service
\ No newline at end of file
+      kind: Service
+      name: media
\ No newline at end of file
== sulibot-platform.yaml 0 set spec.decryption.secretRef.name = "sops-age-v2"
@18
-      name: sops-age
\ No newline at end of file
+      name: sops-age-v2
\ No newline at end of file
== sulibot-platform.yaml 0 add spec.decryption.secretRef.namespace = "flux-system"
@18
-      name: sops-age
\ No newline at end of file
+      name: sops-age
+      namespace: flux-system
\ No newline at end of file
== bjws-freshrss-helmrelease.yaml 0 set_or_add spec.values.controllers.freshrss.pod.hostUsers =
true
@18
-          hostUsers: false
+          hostUsers: true
== bjws-freshrss-helmrelease.yaml 0 set_or_add
spec.values.controllers.freshrss.pod.priorityClassName = "low"
@19
+          priorityClassName: low
== bjws-selfhosted-kustomization.yaml 0 set resources = ["./actual/ks.yaml", "./atuin/ks.yaml",
"./freshrss/ks.yaml", "./immich/ks.yaml", "./karakeep/ks.yaml", "./it-tools/ks.yaml",
"./mailkeep/ks.yaml", "./manyfold/ks.yaml", "./nextcloud/ks.yaml", "./paperless/ks.yaml",
"./thelounge/ks.yaml", "./searxng/ks.yaml", "./webhook/ks.yaml", "./wotcher/ks.yaml"]
@21
+  - ./immich/ks.yaml
== sulibot-atuin-helmrelease.yaml 0 set spec.values.route.app.hostnames = ["{{ .Release.Name
}}.sulibot.com", "atuin.internal"]
@84
+          - "atuin.internal"
== sulibot-atuin-helmrelease.yaml 0 set spec.values.route.app.hostnames = "atuin.internal"
@82
-        hostnames:
-          - "{{ .Release.Name }}.sulibot.com"
+        hostnames: atuin.internal
== sulibot-atuin-helmrelease.yaml 0 set
spec.values.controllers.atuin.containers.app.env.ATUIN_HOST = ["a", "b"]
@38
-              ATUIN_HOST: "::"
+              ATUIN_HOST:
+                - a
+                - b
"""
CASES = parse_cases(CASES_TEXT)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_real_file_edit(case: Case, mode: str) -> None:
    before = fixture(case.fixture)
    after = OPS[case.op](before, document=case.document, path=case.path, value=case.value)
    assert hunks(before, after) == case.diff
    assert_reads(after, case.document, case.path, case.value)


def test_there_are_at_least_forty_real_file_edits() -> None:
    assert len(CASES) >= 40
    assert len(CASES) == CASES_TEXT.count("\n== ")  # none lost to a typo in the table
    assert {c.op for c in CASES} == set(OPS)
