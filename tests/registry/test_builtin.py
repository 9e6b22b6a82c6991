"""The built-in types shipped as package data, and the generator that makes them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bot.registry import Verdict, build_registry
from bot.registry.builtin import builtin_data
from bot.registry.followability import REQUIREMENTS
from bot.registry.registry import builtin_types
from tests.conftest import ROOT, SHARED

DATA = ROOT / "bot" / "registry" / "builtin_types.json"


@pytest.mark.needs_shared
def test_generator_reproduces_the_committed_json() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "gen_builtin_types.py"),
            "--source",
            str(SHARED / "k8s-discovery"),
            "--output",
            "-",
        ],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == DATA.read_bytes()


def test_provenance_names_the_sources_and_their_blob_ids() -> None:
    provenance = builtin_data().provenance
    blobs = {s["file"]: s["blob"] for s in provenance["sources"]}
    assert blobs["aggregated_v2.json"] == "9618c8eb7b9db93ad1bba8c1e82ee61542569382"
    assert blobs["api__v1.json"] == "c7d8484b315cea6fecfea151a53a8f3bb5ab155e"
    assert "builtin-types.k8s-1.37.openapi-lightkube.json" in blobs
    assert provenance["counts"] == {"discovery-1.33": 88, "openapi-1.37": 24}


def test_data_is_sorted_and_unique() -> None:
    types = builtin_types()
    keys = [(t.group, t.version, t.kind) for t in types]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys) == 112
    assert builtin_types() is types  # loaded once


def test_discovery_wins_where_the_tables_overlap() -> None:
    by_key = {(t.group, t.version, t.kind): t for t in builtin_types()}
    # The 1.37 table says ComponentStatus serves watch; discovery does not.
    assert by_key[("", "v1", "ComponentStatus")].verbs == ("get", "list")
    assert by_key[("", "v1", "ComponentStatus")].source == "discovery-1.33"
    # Types only the 1.37 table has are added, marked as such.
    mutating = by_key[("admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicy")]
    assert mutating.source == "openapi-1.37"
    assert by_key[("resource.k8s.io", "v1", "ResourceClaimTemplate")].scope == "Namespaced"
    # Versions removed by 1.37 stay: older clusters still serve them.
    assert ("networking.k8s.io", "v1beta1", "IPAddress") in by_key


def test_preferred_is_the_highest_priority_version_of_the_group() -> None:
    preferred = {(t.group, t.version) for t in builtin_types() if t.preferred}
    assert ("apps", "v1") in preferred
    assert ("autoscaling", "v2") in preferred and ("autoscaling", "v1") not in preferred
    assert ("resource.k8s.io", "v1") in preferred
    assert ("resource.k8s.io", "v1beta2") not in preferred


def test_scale_is_known_for_the_builtin_scale_parents() -> None:
    scaling = {(t.group, t.kind) for t in builtin_types() if t.serves_scale}
    assert scaling == {
        ("", "ReplicationController"),
        ("apps", "Deployment"),
        ("apps", "ReplicaSet"),
        ("apps", "StatefulSet"),
    }


def test_builtin_verdicts() -> None:
    registry = build_registry()
    deployment = registry.resolve("apps", "v1", "Deployment")
    assert deployment.verdict is Verdict.FOLLOWABLE and deployment.followable
    assert deployment.summary == "followable"
    assert deployment.resource == "deployments" and deployment.namespaced
    assert deployment.origin == "builtin"
    assert tuple(c.requirement for c in deployment.checks) == tuple(REQUIREMENTS)
    assert deployment.checks[-1].detail == ".spec.replicas"

    pod = registry.resolve("", "v1", "Pod")
    assert pod.verdict is Verdict.REFUSED and not pod.followable
    assert pod.summary == "not followable — denied-by-policy"
    failing = pod.failing
    assert failing is not None and failing.requirement == "policy"

    secret = registry.resolve("", "v1", "Secret")
    assert secret.followable and secret.sensitive and secret.summary == "followable"
    assert not registry.resolve("", "v1", "ConfigMap").sensitive

    for group, kind in (("batch", "Job"), ("batch", "CronJob"), ("events.k8s.io", "Event")):
        record = registry.resolve(group, "v1", kind)
        assert record.summary == "not followable — denied-by-policy", kind

    namespace = registry.resolve("", "v1", "Namespace")
    assert namespace.followable and namespace.scope == "Cluster" and not namespace.namespaced


def test_types_without_read_verbs_are_refused() -> None:
    registry = build_registry()
    status = registry.resolve("", "v1", "ComponentStatus")
    assert status.summary == "not followable — missing-verb: watch"
    review = registry.resolve("authentication.k8s.io", "v1", "TokenReview")
    assert review.summary == "not followable — missing-verb: get, list, watch"


def test_records_are_sorted_by_group_kind_version() -> None:
    records = build_registry().records()
    keys = [(r.group, r.kind, r.version) for r in records]
    assert keys == sorted(keys)
    assert all(len(r.checks) == 10 for r in records)
    json.dumps([r.summary for r in records], ensure_ascii=False)
