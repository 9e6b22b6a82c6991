"""The facts a ``CustomResourceDefinition`` object states about the type it defines.

The object comes from a repository, so nothing about its shape is assumed: a field of the wrong
type becomes a problem on the returned facts, never an exception. Both ``apiextensions.k8s.io/v1``
and the removed ``v1beta1`` are read (v1beta1's single ``spec.version``, its default scope and
its spec-wide ``subresources`` included), since old repositories still hold v1beta1 files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from bot.registry.followability import SCOPES

CRD_KIND = "CustomResourceDefinition"
CRD_API_VERSIONS = ("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")
# The API server accepts only a dotted path under .spec, without array steps.
_SPEC_PATH = re.compile(r"\.spec(\.[A-Za-z0-9_-]+)+")
_MAX_VERSIONS = 100


@dataclass(frozen=True, slots=True)
class CrdVersion:
    name: str
    served: bool
    scale: bool  # the version serves /scale
    spec_replicas_path: str | None  # set only when it is a usable path under .spec


@dataclass(frozen=True, slots=True)
class CrdFacts:
    name: str  # metadata.name, "<plural>.<group>" when valid
    group: str
    kind: str
    plural: str
    scope: str | None  # "Namespaced" | "Cluster" | None when missing or invalid
    versions: tuple[CrdVersion, ...]
    problems: tuple[str, ...] = ()  # each says which field is wrong and why

    @property
    def usable(self) -> bool:
        """Whether the identity is complete, so that an API server would accept and serve it."""
        return bool(self.group and self.kind and self.plural) and self.name == (
            f"{self.plural}.{self.group}"
        )


def is_crd(obj: object) -> bool:
    return (
        isinstance(obj, Mapping)
        and obj.get("kind") == CRD_KIND
        and obj.get("apiVersion") in CRD_API_VERSIONS
    )


def crd_facts(obj: object) -> CrdFacts | None:
    """Facts from a parsed CRD object; ``None`` when ``obj`` is not a CRD at all.

    Typed ``object`` on purpose: the input is whatever a YAML file held.
    """
    if not isinstance(obj, Mapping) or not is_crd(obj):
        return None
    problems: list[str] = []
    beta = obj.get("apiVersion") == "apiextensions.k8s.io/v1beta1"
    metadata = _mapping(obj.get("metadata"), "metadata", problems)
    spec = _mapping(obj.get("spec"), "spec", problems)
    names = _mapping(spec.get("names"), "spec.names", problems)
    group = _string(spec, "group", "spec.group", problems)
    kind = _string(names, "kind", "spec.names.kind", problems)
    plural = _string(names, "plural", "spec.names.plural", problems)
    name = metadata.get("name")
    name = name if isinstance(name, str) else ""
    if group and plural and name != f"{plural}.{group}":
        # The API server refuses such a CRD, so it never serves the type it describes.
        problems.append(f"metadata.name {name!r} must be '{plural}.{group}'")
    scope = _scope(spec, beta, problems)
    versions = _versions(spec, beta, problems)
    # v1beta1's spec-wide scale is read once per version; say each problem once.
    return CrdFacts(name, group, kind, plural, scope, versions, tuple(dict.fromkeys(problems)))


def _mapping(value: object, where: str, problems: list[str]) -> Mapping[object, object]:
    if isinstance(value, Mapping):
        return value
    problems.append(f"{where} is missing" if value is None else f"{where} must be a mapping")
    return {}


def _string(doc: Mapping[object, object], key: str, where: str, problems: list[str]) -> str:
    value = doc.get(key)
    if isinstance(value, str) and value:
        return value
    problems.append(f"{where} is missing" if value is None else f"{where} must be a string")
    return ""


def _scope(spec: Mapping[object, object], beta: bool, problems: list[str]) -> str | None:
    value = spec.get("scope")
    if value is None and beta:
        return "Namespaced"  # v1beta1 defaulted a missing scope
    if value in SCOPES:
        return str(value)
    problems.append(
        "spec.scope is missing"
        if value is None
        else f"spec.scope {value!r} is not one of Namespaced, Cluster"
    )
    return None


def _versions(
    spec: Mapping[object, object], beta: bool, problems: list[str]
) -> tuple[CrdVersion, ...]:
    raw = spec.get("versions")
    shared_scale: object = None
    if beta:
        # v1beta1: subresources could be set once for every version.
        shared = spec.get("subresources")
        if isinstance(shared, Mapping):
            shared_scale = shared.get("scale")
        single = spec.get("version")
        if raw is None and isinstance(single, str) and single:
            raw = [{"name": single, "served": True}]
    if raw is None:
        problems.append("spec.versions is missing")
        return ()
    if not isinstance(raw, list):
        problems.append("spec.versions must be a list")
        return ()
    out: list[CrdVersion] = []
    for index, item in enumerate(raw[:_MAX_VERSIONS]):
        where = f"spec.versions[{index}]"
        if not isinstance(item, Mapping):
            problems.append(f"{where} must be a mapping")
            continue
        name = item.get("name")
        if not isinstance(name, str) or not name:
            problems.append(f"{where}.name must be a non-empty string")
            continue
        served = item.get("served")
        if not isinstance(served, bool):
            problems.append(f"{where}.served must be true or false; the version is not served")
            served = False
        scale, scale_where = shared_scale, "spec"
        subresources = item.get("subresources")
        if isinstance(subresources, Mapping) and subresources.get("scale") is not None:
            scale, scale_where = subresources.get("scale"), where
        path = _replicas(scale, scale_where, problems) if scale is not None else None
        out.append(CrdVersion(name, served, scale is not None, path))
    if len(raw) > _MAX_VERSIONS:
        problems.append(
            f"spec.versions has more than {_MAX_VERSIONS} entries; the rest are ignored"
        )
    return tuple(out)


def _replicas(scale: object, where: str, problems: list[str]) -> str | None:
    field = f"{where}.subresources.scale.specReplicasPath"
    if not isinstance(scale, Mapping):
        problems.append(f"{where}.subresources.scale must be a mapping")
        return None
    path = scale.get("specReplicasPath")
    if path is None:
        problems.append(f"{field} is missing")
        return None
    if not isinstance(path, str) or not _SPEC_PATH.fullmatch(path):
        problems.append(f"{field} {path!r} is not a dotted path under .spec")
        return None
    return path
