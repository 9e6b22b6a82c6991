"""kustomization.yaml: what it declares, and which of its features the gate refuses (design.md 3.3).

A kustomization is read and acted on, never a passenger: its ``namespace`` and ``resources``
decide the effective namespace of the objects it reaches. Only the fields listed in
``ACCEPTED_FIELDS`` are accepted; every other field refuses under its own feature code.
"""

from __future__ import annotations

import difflib
import functools
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass

from bot.yaml.parsed import LinePath

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
# Every other field kustomize reads (its api/types/kustomization.go): a key that is none of
# these is a misspelling, which kustomize refuses, or reads as a field when only its case differs.
KUSTOMIZE_FIELDS = ACCEPTED_FIELDS | frozenset(
    {
        "openapi",
        "namePrefix",
        "nameSuffix",
        "patchesStrategicMerge",
        "patchesJson6902",
        "replacements",
        "vars",
        "components",
        "crds",
        "bases",
        "configMapGenerator",
        "secretGenerator",
        "helmGlobals",
        "helmCharts",
        "helmChartInflationGenerator",
        "configurations",
        "generators",
        "transformers",
        "validators",
        "inventory",
    }
)
_FOLDED_FIELDS = {name.lower(): name for name in KUSTOMIZE_FIELDS}
_SORTED_FIELDS = sorted(KUSTOMIZE_FIELDS)
# Suggestions are for people: a file with thousands of unknown keys gets a few, not a slow read.
_MAX_NEAR_MISSES = 10
_MAX_KEY_LENGTH = 100
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
    # Every key kustomize has no field by (it refuses to build the file, or reads it as a
    # field when only the case differs), sorted. See ``near_misses`` for what each may mean.
    unknown_keys: tuple[str, ...] = ()
    # (field, path as written) for the files and folders a refused field reads: generator
    # inputs, patch files, components ... Removing one breaks the build, rendering frees it.
    inputs: tuple[tuple[str, str], ...] = ()


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
    unknown: set[str] = set()
    for key in doc:
        if not isinstance(key, str) or key not in ACCEPTED_FIELDS:
            features.add(str(key))
            if not isinstance(key, str) or key not in KUSTOMIZE_FIELDS:
                unknown.add(str(key))
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
        unknown_keys=tuple(sorted(unknown)),
        inputs=_inputs(doc),
    )


# Refused fields that list paths (files, or folders with a kustomization), as kustomize reads them.
_PATH_LISTS = (
    "bases",
    "components",
    "crds",
    "configurations",
    "patchesStrategicMerge",
    "generators",
    "transformers",
    "validators",
)
# Refused fields that list mappings, and the keys of those mappings that name paths.
_PATH_ENTRIES = {
    "configMapGenerator": ("files", "envs", "env"),
    "secretGenerator": ("files", "envs", "env"),
    "patchesJson6902": ("path",),
    "replacements": ("path",),
    "helmCharts": ("valuesFile", "additionalValuesFiles"),
}


def _inputs(doc: Mapping[object, object]) -> tuple[tuple[str, str], ...]:
    """Paths the refused fields of ``doc`` read; malformed entries are skipped (they already
    make the document ``unparseable``, or kustomize refuses them)."""
    found: list[tuple[str, str]] = []
    for field in _PATH_LISTS:
        found.extend((field, p) for p in _paths(doc.get(field)))
    for field, keys in _PATH_ENTRIES.items():
        entries = doc.get(field)
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, Mapping):
                for key in keys:
                    files = key == "files"
                    found.extend((field, p) for p in _paths(entry.get(key), key_path=files))
    openapi = doc.get("openapi")
    if isinstance(openapi, Mapping):
        found.extend(("openapi", p) for p in _paths(openapi.get("path")))
    return tuple(found)


def _paths(value: object, *, key_path: bool = False) -> list[str]:
    """The local paths in a field's value: one path or a list of them. With ``key_path`` (a
    generator's ``files``) an entry may be ``key=path``; one holding a newline is inline YAML."""
    values = value if isinstance(value, list) else [value]
    paths: list[str] = []
    for item in values:
        if not isinstance(item, str) or not item or "\n" in item or is_remote(item):
            continue
        paths.append((item.partition("=")[2] or item) if key_path else item)
    return paths


def near_misses(kust: KustomizationFacts) -> dict[str, str]:
    """Unknown key -> the field it probably means, for the first few unknown keys. Computed
    when a refused kustomization is reported, not when a file is read: every YAML file whose
    first document could be a kustomization (a values file) is read as one."""
    found: dict[str, str] = {}
    for key in kust.unknown_keys[:_MAX_NEAR_MISSES]:
        meant = near_miss(key)
        if meant is not None:
            found[key] = meant
    return found


@functools.lru_cache(maxsize=4096)  # a message and a fix ask for the same keys
def near_miss(key: object) -> str | None:
    """The kustomize field an unknown key most likely means, or ``None``.

    kustomize matches field names ignoring case (Go's JSON decoding), so ``apiversion`` is read
    as ``apiVersion``; any other near spelling (``resource``) is refused by kustomize.
    """
    if not isinstance(key, str) or key in KUSTOMIZE_FIELDS or len(key) > _MAX_KEY_LENGTH:
        return None
    folded = _FOLDED_FIELDS.get(key.lower())
    if folded is not None:
        return folded
    close = difflib.get_close_matches(key, _SORTED_FIELDS, n=1, cutoff=0.6)
    return close[0] if close else None


def resolve_reference(directory: str, reference: str) -> str | None:
    """A repo-relative path for ``reference`` written in a file under ``directory``.

    ``None`` when it leaves the repository. ``directory`` is repo-relative (``""`` is the root).
    """
    if reference.startswith("/"):
        return None
    if "//" not in reference and "./" not in reference and not reference.endswith((".", "/")):
        # Nothing to normalise (the common case, read for every reference of every check).
        return f"{directory}/{reference}" if directory and reference else reference or directory
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
