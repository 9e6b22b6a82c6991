"""Placement paths for both presets (design.md 3.4)."""

from __future__ import annotations

import pytest

from bot.gate.content.placement import PRESETS, placement_path


@pytest.mark.parametrize(
    ("preset", "args", "expected"),
    [
        (
            "default",
            ("apps", "v1", "deployments", "web", "api", True, False),
            "apps/v1/deployments/web/api.yaml",
        ),
        (
            "default",
            ("", "v1", "configmaps", "web", "cfg", True, False),
            "v1/configmaps/web/cfg.yaml",
        ),
        (
            "default",
            ("rbac.authorization.k8s.io", "v1", "clusterroles", None, "reader", False, False),
            "rbac.authorization.k8s.io/v1/clusterroles/reader.yaml",
        ),
        ("default", ("", "v1", "secrets", "web", "db", True, True), "v1/secrets/web/db.sops.yaml"),
        (
            "default",
            ("", "v1", "configmaps", None, "cfg", True, False),
            "v1/configmaps/default/cfg.yaml",
        ),
        (
            "by-namespace",
            ("apps", "v1", "deployments", "web", "api", True, False),
            "web/apps/deployments/api.yaml",
        ),
        (
            "by-namespace",
            ("", "v1", "namespaces", None, "web", False, False),
            "_cluster/namespaces/web.yaml",
        ),
        (
            "by-namespace",
            ("", "v1", "secrets", "web", "db", True, True),
            "web/secrets/db.sops.yaml",
        ),
    ],
)
def test_placement(preset: str, args: tuple[object, ...], expected: str) -> None:
    group, version, resource, namespace, name, namespaced, sensitive = args
    assert (
        placement_path(
            PRESETS[preset],
            group=str(group),
            version=str(version),
            resource=str(resource),
            namespace=namespace if namespace is None else str(namespace),
            name=str(name),
            namespaced=bool(namespaced),
            sensitive=bool(sensitive),
        )
        == expected
    )
