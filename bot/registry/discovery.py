"""Kubernetes discovery documents, already decoded, turned into served types.

Two shapes are read: aggregated discovery (``apidiscovery.k8s.io/v2`` or ``v2beta1``
``APIGroupDiscoveryList``, what ``/apis`` and ``/api`` serve) and the legacy per-group-version
``APIResourceList``. The documents may come from a repository, so every field is type-checked
and a problem is a :class:`DocumentError` naming where in the document it is; the number of
resources is bounded so that YAML aliases cannot multiply the work.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from bot.registry.followability import CLUSTER, NAMESPACED, gv_string

AGGREGATED_API_VERSIONS = ("apidiscovery.k8s.io/v2", "apidiscovery.k8s.io/v2beta1")
MAX_RESOURCES = 20_000

Path = tuple[str | int, ...]


class DocumentError(ValueError):
    """A document that is not discovery data; ``path`` says where (``items[3].versions``)."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{format_path(path)}: {problem}" if path else problem)
        self.path = path
        self.problem = problem


@dataclass(frozen=True, slots=True)
class ServedType:
    """One top-level resource as discovery lists it."""

    group: str
    version: str
    kind: str
    resource: str
    scope: str | None  # "Namespaced" | "Cluster" | None when the document does not say
    verbs: tuple[str, ...]
    subresources: tuple[str, ...]  # names, e.g. ("scale", "status")
    # Aggregated discovery marks a group/version whose backing server did not answer.
    stale: bool = False
    preferred: bool = False  # first version of its group in aggregated discovery


@dataclass(frozen=True, slots=True)
class SubresourceKind:
    """A kind a subresource answers with, e.g. ``autoscaling/v1 Scale`` for ``.../scale``."""

    group: str
    version: str
    kind: str
    via: str  # "apps/v1 deployments/scale"


@dataclass(frozen=True, slots=True)
class Discovery:
    types: tuple[ServedType, ...]
    subresource_kinds: tuple[SubresourceKind, ...]


def format_path(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def is_discovery(doc: object) -> bool:
    return isinstance(doc, Mapping) and (
        doc.get("kind") == "APIResourceList"
        or (doc.get("kind") == "APIGroupDiscoveryList" and "items" in doc)
    )


def read_discovery(docs: Sequence[object]) -> Discovery:
    """Served types from every document; each must be aggregated discovery or a resource list."""
    reader = _Reader()
    for index, doc in enumerate(docs):
        base: Path = (index,) if len(docs) > 1 else ()
        if not isinstance(doc, Mapping):
            raise DocumentError(base, "expected a discovery document (a mapping)")
        kind = doc.get("kind")
        if kind == "APIGroupDiscoveryList":
            reader.aggregated(doc, base)
        elif kind == "APIResourceList":
            reader.resource_list(doc, base)
        else:
            raise DocumentError(
                (*base, "kind"),
                f"{kind!r} is not APIGroupDiscoveryList or APIResourceList",
            )
    return Discovery(tuple(reader.types), tuple(reader.subresource_kinds))


class _Reader:
    def __init__(self) -> None:
        self.types: list[ServedType] = []
        self.subresource_kinds: list[SubresourceKind] = []

    def _count(self, path: Path) -> None:
        if len(self.types) + len(self.subresource_kinds) >= MAX_RESOURCES:
            raise DocumentError(path, f"more than {MAX_RESOURCES} resources")

    def aggregated(self, doc: Mapping[object, object], base: Path) -> None:
        api_version = doc.get("apiVersion")
        if api_version not in AGGREGATED_API_VERSIONS:
            raise DocumentError(
                (*base, "apiVersion"),
                f"{api_version!r} is not one of {', '.join(AGGREGATED_API_VERSIONS)}",
            )
        for gi, group_doc in _items(doc, "items", base):
            gpath = (*base, "items", gi)
            group = _text(_mapping(group_doc.get("metadata", {}), (*gpath, "metadata")), "name")
            for vi, version_doc in _items(group_doc, "versions", gpath):
                vpath = (*gpath, "versions", vi)
                version = _required(version_doc, "version", vpath)
                stale = version_doc.get("freshness") == "Stale"
                for ri, res in _items(version_doc, "resources", vpath):
                    self._aggregated_resource(
                        res, group, version, stale, vi == 0, (*vpath, "resources", ri)
                    )

    def _aggregated_resource(
        self,
        res: Mapping[object, object],
        group: str,
        version: str,
        stale: bool,
        preferred: bool,
        path: Path,
    ) -> None:
        self._count(path)
        resource = _required(res, "resource", path)
        response = res.get("responseKind")
        if response is None:
            return  # a resource without a kind names no type
        kind = _required(_mapping(response, (*path, "responseKind")), "kind", path)
        scope = res.get("scope")
        subresources: list[str] = []
        for si, sub in _items(res, "subresources", path):
            spath = (*path, "subresources", si)
            name = _required(sub, "subresource", spath)
            subresources.append(name)
            answer = sub.get("responseKind")
            if answer is not None:
                answer = _mapping(answer, (*spath, "responseKind"))
                # An empty group and version mean "the parent's group/version".
                sub_version = _text(answer, "version") or version
                sub_group = _text(answer, "group") if _text(answer, "version") else group
                sub_kind = _text(answer, "kind")
                if sub_kind and (sub_group, sub_version, sub_kind) != (group, version, kind):
                    via = f"{gv_string(group, version)} {resource}/{name}"
                    self.subresource_kinds.append(
                        SubresourceKind(sub_group, sub_version, sub_kind, via)
                    )
        self.types.append(
            ServedType(
                group=group,
                version=version,
                kind=kind,
                resource=resource,
                scope=scope if scope in (NAMESPACED, CLUSTER) else None,
                verbs=_verbs(res, path),
                subresources=tuple(sorted(set(subresources))),
                stale=stale,
                preferred=preferred,
            )
        )

    def resource_list(self, doc: Mapping[object, object], base: Path) -> None:
        group_version = _required(doc, "groupVersion", base)
        group, _, version = group_version.rpartition("/")
        parents: list[tuple[str, str, str | None, tuple[str, ...]]] = []
        subs: list[tuple[str, str, SubresourceKind]] = []  # (parent, name, answer)
        for ri, res in _items(doc, "resources", base):
            path = (*base, "resources", ri)
            self._count(path)
            name = _required(res, "name", path)
            kind = _required(res, "kind", path)
            parent, slash, sub = name.partition("/")
            if slash:
                # An empty group and version mean "the parent's group/version".
                sub_group = _text(res, "group") if _text(res, "version") else group
                sub_version = _text(res, "version") or version
                answer = SubresourceKind(sub_group, sub_version, kind, f"{group_version} {name}")
                subs.append((parent, sub, answer))
                continue
            namespaced = res.get("namespaced")
            if namespaced is not None and not isinstance(namespaced, bool):
                raise DocumentError((*path, "namespaced"), "must be true or false")
            scope = None if namespaced is None else (NAMESPACED if namespaced else CLUSTER)
            parents.append((name, kind, scope, _verbs(res, path)))
        kinds = {name: kind for name, kind, _, _ in parents}
        names: dict[str, set[str]] = {}
        for parent, sub, _ in subs:
            names.setdefault(parent, set()).add(sub)
        for name, kind, scope, verbs in parents:
            served = tuple(sorted(names.get(name, ())))
            self.types.append(ServedType(group, version, kind, name, scope, verbs, served))
        for parent, _, answer in subs:
            # pods/status answers with the parent's own kind: no new kind there.
            if (answer.group, answer.version, answer.kind) != (group, version, kinds.get(parent)):
                self.subresource_kinds.append(answer)


def _mapping(value: object, path: Path) -> Mapping[object, object]:
    if not isinstance(value, Mapping):
        raise DocumentError(path, "expected a mapping")
    return value


def _items(
    doc: Mapping[object, object], key: str, path: Path
) -> Iterator[tuple[int, Mapping[object, object]]]:
    value = doc.get(key)
    if value is None:
        return
    if not isinstance(value, list):
        raise DocumentError((*path, key), "expected a list")
    for index, item in enumerate(value):
        yield index, _mapping(item, (*path, key, index))


def _text(doc: Mapping[object, object], key: str) -> str:
    value = doc.get(key)
    return value if isinstance(value, str) else ""


def _required(doc: Mapping[object, object], key: str, path: Path) -> str:
    value = doc.get(key)
    if not isinstance(value, str) or not value:
        raise DocumentError((*path, key), "must be a non-empty string")
    return value


def _verbs(doc: Mapping[object, object], path: Path) -> tuple[str, ...]:
    value = doc.get("verbs", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DocumentError((*path, "verbs"), "must be a list of strings")
    return tuple(sorted(set(value)))
