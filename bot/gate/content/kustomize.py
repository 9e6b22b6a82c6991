"""kustomization.yaml: what it declares, and which of its features the gate refuses (DESIGN 3.3).

A kustomization is read and acted on, never a passenger: its ``namespace`` and ``resources``
decide the effective namespace of the objects it reaches. Only the fields listed in
``ACCEPTED_FIELDS`` are accepted; every other field refuses under its own feature code.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass

from bot.yaml.model import LinePath

KUSTOMIZE_API_PREFIX = "kustomize.config.k8s.io/"
ACCEPTED_FIELDS = frozenset(
    {
        "apiVersion",
        "kind",
        "metadata",
        "namespace",
        "resources",
        "images",
        "replicas",
        "patches",
        "commonLabels",
        "labels",
        "commonAnnotations",
        "buildMetadata",
        "generatorOptions",
        "sortOptions",
    }
)
_REMOTE_PREFIXES = ("http://", "https://", "git@", "ssh://", "git::", "github.com/", "gitlab.com/")


@dataclass(frozen=True, slots=True)
class KustomizationFacts:
    """The parts of one kustomization document the gate acts on. Paths are as written."""

    namespace: str | None
    resources: tuple[str, ...]
    patch_paths: tuple[str, ...]
    # Feature codes the document uses outside the accepted set, sorted, without duplicates.
    features: tuple[str, ...]
    # 1-based lines of each entry of ``resources`` and ``patch_paths`` (0 when unknown) and of
    # ``namespace``: where a refusal about one of them points.
    resource_lines: tuple[int, ...] = ()
    patch_lines: tuple[int, ...] = ()
    namespace_line: int = 0


def looks_like_kustomization(doc: Mapping[str, object]) -> bool:
    """kustomize's own document, as opposed to e.g. a Flux ``Kustomization`` object."""
    api = doc.get("apiVersion")
    kind = doc.get("kind")
    api_ok = api is None or (isinstance(api, str) and api.startswith(KUSTOMIZE_API_PREFIX))
    kind_ok = kind is None or kind in ("Kustomization", "Component")
    return api_ok and kind_ok


def is_remote(resource: str) -> bool:
    return resource.startswith(_REMOTE_PREFIXES) or "://" in resource or "?ref=" in resource


def kustomization_facts(
    doc: object, lines: Mapping[LinePath, int] | None = None
) -> KustomizationFacts:
    """Read one kustomization document; anything malformed is the ``unparseable`` feature.

    ``lines`` says where its parts start (``parse_yaml``'s ``lines_under`` of ``resources`` and
    ``patches``), so a refusal can name an entry's line.
    """
    lines = lines or {}
    if not isinstance(doc, Mapping):
        return KustomizationFacts(None, (), (), ("unparseable",))
    features: set[str] = set()
    for key in doc:
        if not isinstance(key, str) or key not in ACCEPTED_FIELDS:
            features.add(str(key))
    if doc.get("kind") == "Component":
        features.add("component")
    namespace = doc.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        features.add("unparseable")
        namespace = None
    resources: list[str] = []
    resource_lines: list[int] = []
    raw_resources = doc.get("resources", [])
    if raw_resources is None:
        raw_resources = []
    if not isinstance(raw_resources, list) or not all(isinstance(r, str) for r in raw_resources):
        features.add("unparseable")
    else:
        for index, resource in enumerate(raw_resources):
            if is_remote(resource):
                features.add("remote-base")
            else:
                resources.append(resource)
                resource_lines.append(lines.get(("resources", index), 0))
    patch_paths: list[str] = []
    patch_lines: list[int] = []
    raw_patches = doc.get("patches", [])
    if raw_patches is None:
        raw_patches = []
    if not isinstance(raw_patches, list):
        features.add("unparseable")
    else:
        for index, patch in enumerate(raw_patches):
            if not isinstance(patch, Mapping):
                features.add("unparseable")
            elif "patch" in patch:
                features.add("patches-inline")
            elif isinstance(patch.get("path"), str):
                patch_paths.append(str(patch["path"]))
                patch_lines.append(lines.get(("patches", index), 0))
            else:
                features.add("unparseable")
    return KustomizationFacts(
        namespace or None,
        tuple(resources),
        tuple(patch_paths),
        tuple(sorted(features)),
        tuple(resource_lines),
        tuple(patch_lines),
        lines.get(("namespace",), 0),
    )


def resolve_reference(directory: str, reference: str) -> str | None:
    """A repo-relative path for ``reference`` written in a file under ``directory``.

    ``None`` when it leaves the repository. ``directory`` is repo-relative (``""`` is the root).
    """
    if reference.startswith("/"):
        return None
    joined = (
        posixpath.normpath(posixpath.join(directory, reference))
        if directory
        else (posixpath.normpath(reference))
    )
    if joined == ".":
        return ""
    if joined == ".." or joined.startswith("../"):
        return None
    return joined
