"""Locating a command's object by identity in the base's report."""

from __future__ import annotations

from bot.changes.locate import Located, NotLocated, locate
from bot.gate.report import ManagedObject, Report, Role, TargetReport


def managed(group: str, kind: str, ns: str, name: str, path: str) -> ManagedObject:
    return ManagedObject((group, kind, ns, name), path, 1, "d" * 64)


def target(name: str, *objects: ManagedObject) -> TargetReport:
    return TargetReport(name, f"clusters/{name}", (), {Role.MANAGED: len(objects)}, managed=objects)


WEB = managed("apps", "Deployment", "web", "api", "clusters/prod/apps/web/api.yaml")
NODE = managed("talos.dev", "TalosMachine", "", "node-1", "clusters/prod/machines/node-1.yaml")
STAGING = managed("apps", "Deployment", "web", "api", "clusters/staging/apps/web/api.yaml")
REPORT = Report("r", (), (target("prod", WEB, NODE), target("staging", STAGING)))


def test_located_by_identity_in_the_named_target() -> None:
    got = locate(REPORT, kind="Deployment", namespace="web", name="api", target="prod")
    assert got == Located("prod", WEB)
    got = locate(REPORT, kind="Deployment.apps", namespace="web", name="api", target="staging")
    assert got == Located("staging", STAGING)


def test_cluster_scoped_objects_are_named_with_underscore() -> None:
    got = locate(REPORT, kind="TalosMachine", namespace=None, name="node-1", target=None)
    assert got == Located("prod", NODE)


def test_ambiguity_and_absence_are_usage_errors() -> None:
    got = locate(REPORT, kind="Deployment", namespace="web", name="api", target=None)
    assert isinstance(got, NotLocated) and "prod, staging" in got.message
    assert "in <target>" in got.message
    missing = locate(REPORT, kind="Deployment", namespace="web", name="nope", target=None)
    assert isinstance(missing, NotLocated) and "no managed Deployment web/nope" in missing.message
    wrong_group = locate(
        REPORT, kind="Deployment.extensions", namespace="web", name="api", target="prod"
    )
    assert isinstance(wrong_group, NotLocated)


def test_the_search_can_be_limited_to_some_targets() -> None:
    got = locate(
        REPORT, kind="Deployment", namespace="web", name="api", target=None, targets=["staging"]
    )
    assert got == Located("staging", STAGING)
