"""What the content gate needs from one YAML file, extracted once per blob.

Facts are a pure function of a file's bytes, so they are cached by blob id (content-addressed)
and shared across checks and, later, across worker processes. Only small, plain data is kept:
identities, SOPS markers, kustomization fields, CRD facts, values-file references and each
object's digest.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from bot.gate.content.digest import document_digest
from bot.gate.content.kustomize import (
    KustomizationFacts,
    kustomization_facts,
    looks_like_kustomization,
)
from bot.gate.content.names import name_problem, namespace_problem
from bot.gate.content.sops import sops_problem
from bot.registry.crd import CrdFacts, crd_facts
from bot.yaml.documents import parse_yaml
from bot.yaml.parsed import LinePath

SOPS_MARKER = "ENC[AES256_GCM,"
CRD_GROUP = "apiextensions.k8s.io"
# The top-level keys whose parts' lines the gate may name: an object's name and namespace, a
# Secret's values, a kustomization's resources and patches.
_LINES_UNDER = frozenset({"metadata", "data", "stringData", "resources", "patches"})
SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"  # noqa: S105 - a Secret type


class DocKind(enum.StrEnum):
    KRM = "krm"
    EMPTY = "empty"
    NON_KRM = "non-krm"
    INVALID = "invalid"


@dataclass(frozen=True, slots=True)
class ObjectFacts:
    """A Kubernetes object: a mapping with non-empty ``apiVersion``, ``kind``, ``metadata.name``."""

    api_version: str
    kind: str
    name: str
    namespace: str | None
    sops: bool  # a top-level ``sops`` mapping: SOPS-encrypted, unless ``sops_error`` says why not
    identity_encrypted: bool  # apiVersion, kind, name or namespace is itself an ENC[...] value
    crd: CrdFacts | None = None
    # Flux HelmRelease ``spec.chart.spec.valuesFiles`` / Argo CD ``helm.valueFiles``, as written.
    values_files: tuple[str, ...] = ()
    # Argo CD ``spec.source(s)[].path``: what its value files are relative to.
    source_paths: tuple[str, ...] = ()
    # SHA-256 of the document's canonical JSON (approval fingerprints), "" unless the facts were
    # extracted with digests (a strict target's files): computed here, once per blob, and
    # cached with the rest. Only strict targets' approvals read it, and for every other file it
    # was a tenth of the gate's time.
    digest: str = ""
    # (line, why) when the API server refuses metadata.name for this kind, or metadata.namespace
    # (which matters only if the type is namespaced: the gate decides that with its registry).
    name_error: tuple[int, str] | None = None
    namespace_error: tuple[int, str] | None = None
    # (line, why) when a document with a ``sops`` mapping still does not count as encrypted.
    sops_error: tuple[int, str] | None = None
    # A core Secret of type service-account-token with no data at all: the cluster's token
    # controller fills it in, so nothing in the repository's copy is secret.
    empty_token_secret: bool = False

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]


@dataclass(frozen=True, slots=True)
class DocFacts:
    kind: DocKind
    line: int
    obj: ObjectFacts | None = None
    message: str | None = None  # why it is invalid or not KRM


@dataclass(frozen=True, slots=True)
class FileFacts:
    documents: tuple[DocFacts, ...]
    # The first document read as a kustomization (only meaningful for a build directive).
    kustomization: KustomizationFacts | None = None
    # Derived from ``documents`` once, at extraction: the gate asks for them on every check.
    objects: tuple[tuple[DocFacts, ObjectFacts], ...] = ()
    is_empty: bool = True
    digested: bool = True  # every object's ``digest`` is set (trivially, with no objects)

    @classmethod
    def of(
        cls,
        documents: tuple[DocFacts, ...],
        kustomization: KustomizationFacts | None,
        *,
        digests: bool,
    ) -> FileFacts:
        objects = tuple((d, d.obj) for d in documents if d.obj is not None)
        empty = all(d.kind is DocKind.EMPTY for d in documents)
        return cls(documents, kustomization, objects, empty, digests or not objects)


def extract_facts(data: bytes, *, digests: bool = False) -> FileFacts:
    """The facts of one file; with ``digests``, each object's digest too."""
    parsed = parse_yaml(data, lines_under=_LINES_UNDER)
    docs: list[DocFacts] = []
    kustomization: KustomizationFacts | None = None
    for doc in parsed.documents:
        if doc.error is not None:
            docs.append(DocFacts(DocKind.INVALID, doc.error_line or doc.line, message=doc.error))
            continue
        value = doc.value
        if doc.index == 0 and isinstance(value, Mapping) and looks_like_kustomization(value):
            kustomization = kustomization_facts(value, doc.lines)
        docs.append(_document(value, doc.line, doc.lines, digests))
    return FileFacts.of(tuple(docs), kustomization, digests=digests)


def _document(value: object, line: int, lines: Mapping[LinePath, int], digests: bool) -> DocFacts:
    if value is None:
        return DocFacts(DocKind.EMPTY, line)
    if not isinstance(value, Mapping):
        return DocFacts(DocKind.NON_KRM, line, message=f"the document is a {_shape(value)}")
    api_version = value.get("apiVersion")
    kind = value.get("kind")
    metadata = value.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    missing = [
        key
        for key, present in (
            ("apiVersion", _text(api_version)),
            ("kind", _text(kind)),
            ("metadata.name", _text(name)),
        )
        if not present
    ]
    if missing:
        generated = metadata.get("generateName") if isinstance(metadata, Mapping) else None
        if missing == ["metadata.name"] and _text(generated):
            message = (
                f"metadata.generateName {generated!r} and no metadata.name: the API server "
                "names such an object anew at each create, so no file can stand for it"
            )
            return DocFacts(DocKind.NON_KRM, line, message=message)
        return DocFacts(DocKind.NON_KRM, line, message=f"no {', '.join(missing)}")
    assert isinstance(api_version, str) and isinstance(kind, str) and isinstance(name, str)
    assert isinstance(metadata, Mapping)
    namespace = metadata.get("namespace")
    namespace = namespace if _text(namespace) else None
    assert namespace is None or isinstance(namespace, str)
    identity = [api_version, kind, name, namespace or ""]
    group = api_version.rpartition("/")[0]
    has_sops = isinstance(value.get("sops"), Mapping)
    name_error = name_problem(group, kind, name)
    namespace_error = namespace_problem(namespace) if namespace is not None else None
    obj = ObjectFacts(
        api_version=api_version,
        kind=kind,
        name=name,
        namespace=namespace,
        sops=has_sops,
        identity_encrypted=any(part.startswith(SOPS_MARKER) for part in identity),
        crd=_crd(value, api_version, kind),
        values_files=_values_files(value, api_version, kind),
        source_paths=_argo_source_paths(value, api_version, kind),
        digest=document_digest(value) if digests else "",
        name_error=_at(lines, ("metadata", "name"), line, name_error),
        namespace_error=_at(lines, ("metadata", "namespace"), line, namespace_error),
        sops_error=sops_problem(value, lines, line) if has_sops else None,
        empty_token_secret=kind == "Secret" and api_version == "v1" and _empty_token(value),
    )
    return DocFacts(DocKind.KRM, line, obj=obj)


def _at(
    lines: Mapping[LinePath, int], part: LinePath, fallback: int, why: str | None
) -> tuple[int, str] | None:
    return None if why is None else (lines.get(part, fallback), why)


def _empty_token(value: Mapping[str, object]) -> bool:
    """A token Secret whose ``data`` and ``stringData`` are absent, null or ``{}``; any other
    value (a key with an empty value, a list, text) may hold a secret, so it does not count."""
    if value.get("type") != SERVICE_ACCOUNT_TOKEN:
        return False
    return all(value.get(key) in (None, {}) for key in ("data", "stringData"))


def _text(value: object) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _shape(value: object) -> str:
    if isinstance(value, list):
        return "list"
    return "plain value" if not isinstance(value, Mapping) else "mapping"


def _crd(value: Mapping[str, object], api_version: str, kind: str) -> CrdFacts | None:
    if kind != "CustomResourceDefinition" or not api_version.startswith(CRD_GROUP + "/"):
        return None
    return crd_facts(value)


def _path(value: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def _argo_sources(value: Mapping[str, object]) -> list[object]:
    sources: list[object] = [_path(value, "spec", "source")]
    many = _path(value, "spec", "sources")
    if isinstance(many, list):
        sources.extend(many)
    return [s for s in sources if isinstance(s, Mapping)]


def _values_files(value: Mapping[str, object], api_version: str, kind: str) -> tuple[str, ...]:
    if kind == "HelmRelease" and api_version.startswith("helm.toolkit.fluxcd.io/"):
        return _strings(_path(value, "spec", "chart", "spec", "valuesFiles"))
    if kind == "Application" and api_version.startswith("argoproj.io/"):
        files: list[str] = []
        for source in _argo_sources(value):
            files.extend(_strings(_path(source, "helm", "valueFiles")))
        return tuple(files)
    return ()


def _argo_source_paths(value: Mapping[str, object], api_version: str, kind: str) -> tuple[str, ...]:
    if kind != "Application" or not api_version.startswith("argoproj.io/"):
        return ()
    paths = [_path(s, "path") for s in _argo_sources(value)]
    return tuple(p for p in paths if isinstance(p, str))
