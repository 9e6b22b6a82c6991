"""Which folders of a repository to propose as GitTarget paths (design.md 6.6). Pure.

Targets a platform team would accept: each proposed folder is one the gate accepts, or refuses
only with issues the onboarding body gives a working fix for. It starts from the top-most
folders whose YAML is mostly Kubernetes objects (:mod:`bot.onboarding.folders`; never a folder
:mod:`bot.onboarding.skip` names: hidden, charts, test data, tooling), then looks at each as
the gate would (:mod:`bot.onboarding.assess`):

- a folder with an issue no fix mends in its own files (its kustomization reaches outside it,
  it is a kustomize Component) is one build that cannot be a target: neither it nor anything
  below it is proposed;
- a folder whose child folders are **environments** (:mod:`bot.onboarding.environments`) is
  proposed as those environments, each a target of its own;
- a folder with such an issue further down (a kustomization reaching outside its folder,
  objects named with substitution variables) gives way to the qualifying folders below it,
  each looked at in turn;
- anything else is proposed.

**The repository root is the last resort**, proposed only when nothing else is: a root target
would claim the repository's README, CI files and ``.ichor.yaml``.

What was left out is said, with why, so the body can tell a team what it will not guard. At
most ``max_targets`` are kept: kustomization roots first, then those with the most objects,
then path order. The result is in path order, named from the path (``clusters/prod`` is
``clusters-prod``) and unique.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from bot.gate.content.cache import FactsCache, MemoryFactsCache
from bot.gate.policy import DEFAULT_MAX_YAML_BYTES
from bot.git.snapshot import Snapshot
from bot.onboarding.assess import Assessment, assess
from bot.onboarding.environments import Split, named_split, shared_split
from bot.onboarding.folders import Folders, count_folders, mostly_objects
from bot.onboarding.names import target_names
from bot.paths import path_sort_key

MAX_TARGETS: Final = 20


@dataclass(frozen=True, slots=True)
class Candidate:
    """A proposed target: its name and path (``""`` is the repository root), with what was
    counted under it."""

    name: str
    path: str
    objects: int
    documents: int
    has_kustomization: bool


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A folder that looked like a target and is not proposed: ``reason`` is ours, ``where``
    the file that shows it, ``parts`` the folders below it proposed or looked at instead."""

    path: str
    reason: str
    where: str | None = None
    parts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Detection:
    candidates: tuple[Candidate, ...]
    left_out: tuple[LeftOut, ...]  # in path order
    objects: int = 0  # Kubernetes objects counted in the whole repository

    @property
    def looks_like_gitops(self) -> bool:
        """Whether anything in the repository looked like Kubernetes objects: where nothing
        did, a new, empty target is proposed only on request (an app installed on every
        repository of an organization must not propose one to each)."""
        return bool(self.candidates or self.left_out or self.objects)


def detect_targets(
    snapshot: Snapshot,
    *,
    max_targets: int = MAX_TARGETS,
    max_yaml_bytes: int = DEFAULT_MAX_YAML_BYTES,
) -> tuple[Candidate, ...]:
    """The folders to propose as targets, in path order, named uniquely (design.md 2)."""
    return detect(snapshot, max_targets=max_targets, max_yaml_bytes=max_yaml_bytes).candidates


def detect(
    snapshot: Snapshot,
    *,
    max_targets: int = MAX_TARGETS,
    max_yaml_bytes: int = DEFAULT_MAX_YAML_BYTES,
    cache: FactsCache | None = None,
) -> Detection:
    """The candidates, and what was left out with why."""
    folders = count_folders(snapshot, max_yaml_bytes)
    chooser = _Chooser(snapshot, folders, cache or MemoryFactsCache(), max_yaml_bytes)
    chosen = chooser.choose(folders.select(folders.root.children))
    root = folders.root
    if not chosen and mostly_objects(root.objects, root.documents) and not root.holds_chart:
        chosen = chooser.choose([""], descend=False)
    kept = sorted(chosen, key=lambda p: _preference(folders, p))[: max(max_targets, 0)]
    kept.sort(key=path_sort_key)
    over = f"over the limit of {max_targets} targets"
    left = [
        *chooser.left_out,
        *(LeftOut(f.path, f.skipped or "") for f in folders.skipped()),
        *(LeftOut(p, over) for p in chosen if p not in kept),
    ]
    candidates = tuple(
        Candidate(
            name,
            path,
            folders[path].objects,
            folders[path].documents,
            folders[path].has_kustomization,
        )
        for name, path in zip(target_names(kept), kept, strict=True)
    )
    left.sort(key=lambda x: path_sort_key(x.path))
    return Detection(candidates, tuple(left), folders.root.objects)


class _Chooser:
    def __init__(
        self, snapshot: Snapshot, folders: Folders, cache: FactsCache, max_yaml_bytes: int
    ) -> None:
        self._snapshot = snapshot
        self._folders = folders
        self._cache = cache
        self._max_yaml_bytes = max_yaml_bytes
        self._assessed: dict[str, Assessment] = {}
        self.left_out: list[LeftOut] = []

    def choose(self, paths: list[str], *, descend: bool = True) -> list[str]:
        """The folders of ``paths`` that may be proposed, each, when it may not, replaced by
        its environments or by the qualifying folders below it; a stack, not recursion."""
        chosen: list[str] = []
        pending = list(reversed(paths))
        while pending:
            path = pending.pop()
            assessment = self._assess(path)
            split = None if assessment.whole or not path else self._split(assessment)
            if split is not None:
                parts = self._parts(path, split)
                self.left_out.append(LeftOut(path, split.reason, parts=tuple(parts)))
                pending.extend(reversed(parts))
            elif assessment.blockers:
                first = assessment.blockers[0]
                whole = not descend or assessment.whole
                parts = [] if whole else self._folders.below(path)
                self.left_out.append(LeftOut(path, first.reason, first.where, tuple(parts)))
                pending.extend(reversed(parts))
            else:
                chosen.append(path)
        return chosen

    def _assess(self, path: str) -> Assessment:
        found = self._assessed.get(path)
        if found is None:
            found = assess(
                self._snapshot, path, cache=self._cache, max_yaml_bytes=self._max_yaml_bytes
            )
            self._assessed[path] = found
        return found

    def _split(self, assessment: Assessment) -> Split | None:
        split = shared_split(assessment.path, assessment.identities)
        if split is not None:
            return split
        named = named_split(assessment.path, assessment.identities)
        if named is None:
            return None
        # Overlays of one base are not environments of their own: each must stand alone.
        standing = all(not self._assess(p).blockers for p in named.environments)
        return named if standing else None

    def _parts(self, path: str, split: Split) -> list[str]:
        """The environments that hold mostly objects, and what qualifies in the other
        children, in path order."""
        parts = [
            p
            for p in split.environments
            if self._folders[p].skipped is None
            and mostly_objects(self._folders[p].objects, self._folders[p].documents, at_least=1)
        ]
        others = [c for c in self._folders[path].children if c not in split.environments]
        parts += self._folders.select(others)
        return sorted(parts, key=path_sort_key)


def _preference(folders: Folders, path: str) -> tuple[bool, int, bytes]:
    folder = folders[path]
    return (not folder.has_kustomization, -folder.objects, path_sort_key(path))
