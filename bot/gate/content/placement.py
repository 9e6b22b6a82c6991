"""Placement: the path the operator writes a managed object to (design.md 3.4)."""

from __future__ import annotations

PRESETS = {
    "default": "{group}/{version}/{resource}/{namespace}/{name}.yaml",
    "by-namespace": "{namespace}/{group}/{resource}/{name}.yaml",
}
CLUSTER_SEGMENT = "_cluster"
DEFAULT_NAMESPACE = "default"


def placement_path(
    template: str,
    *,
    group: str,
    version: str,
    resource: str,
    namespace: str | None,
    name: str,
    namespaced: bool,
    sensitive: bool,
) -> str:
    """The target-relative path for one object.

    The core group drops its ``{group}`` segment. A cluster-scoped object drops its
    ``{namespace}`` segment, except where the namespace leads the path: there it lives under
    ``_cluster``. A sensitive object ends in ``.sops.yaml``, since it is stored encrypted.
    """
    values = {
        "group": group,
        "version": version,
        "resource": resource,
        "namespace": (namespace or DEFAULT_NAMESPACE) if namespaced else "",
        "name": name,
    }
    segments: list[str] = []
    for index, segment in enumerate(template.split("/")):
        if segment == "{group}" and not group:
            continue
        if segment == "{namespace}" and not namespaced:
            if index == 0:
                segments.append(CLUSTER_SEGMENT)
            continue
        segments.append(segment.format_map(values))
    path = "/".join(segments)
    if sensitive and path.endswith(".yaml") and not path.endswith(".sops.yaml"):
        path = path[: -len(".yaml")] + ".sops.yaml"
    return path
