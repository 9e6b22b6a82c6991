"""Small builders for CRD objects, shared by the registry tests."""

from __future__ import annotations

from typing import Any

from bot.registry.crd import CrdFacts, crd_facts


def crd_object(
    kind: str = "Widget",
    plural: str = "widgets",
    group: str = "example.com",
    *,
    scope: str = "Namespaced",
    versions: list[dict[str, Any]] | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name or f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural, "singular": plural.rstrip("s")},
            "scope": scope,
            "versions": versions
            if versions is not None
            else [{"name": "v1", "served": True, "storage": True}],
        },
    }


def crd(*args: Any, **kwargs: Any) -> CrdFacts:
    facts = crd_facts(crd_object(*args, **kwargs))
    assert facts is not None
    return facts
