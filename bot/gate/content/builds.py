"""What a target's kustomizations build, so that a fix never breaks the build it fixes.

A fix that removes a file kustomize reads breaks ``kustomize build``: the field that reads it
must change first. This reads the kustomization graph of one target (references resolved as
in :mod:`bot.gate.content.context`) to say

- which refused field reads a file (a generator's input, a transformer configuration ...);
- whether a managed file is an orphan: its folder has a kustomization, yet no kustomization
  lists it, so kustomize never builds it;
- what rendering a refused kustomization into plain objects takes: the flags ``kubectl
  kustomize`` needs, and the files the rendering frees (read by it and by nothing else).

The graph is built on first use, so a target whose kustomizations are all accepted pays
nothing. Walks are linear, and the renders of one target share a budget: past it a fix names
the command without the list of files, rather than a hostile tree making the gate quadratic.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.gate.content.facts import FileFacts
from bot.gate.content.kustomize import KustomizationFacts, resolve_reference
from bot.paths import is_within

# Edges walked over all the renders of one target before plans stop listing files.
MAX_RENDER_WALK = 100_000
# Fields whose files kustomize builds into objects (the rest it reads as patches or inputs).
_BUILT_FROM = frozenset({"resources", "bases"})
_HELM = frozenset({"helmCharts", "helmChartInflationGenerator", "helmGlobals"})


@dataclass(frozen=True, slots=True)
class _Reads:
    """What one kustomization reads, resolved to paths of the target."""

    files: tuple[tuple[str, str], ...]  # (field, file)
    directives: tuple[str, ...]  # the kustomizations of folders it names
    loose: bool  # it names a file outside its own folder (kustomize's load restrictor)


@dataclass(frozen=True, slots=True)
class RenderPlan:
    """How to render one kustomization into plain objects."""

    output: str  # the file to render into, beside the kustomization
    helm: bool  # a kustomization it builds inflates Helm charts
    loose: bool  # one names a file outside its own folder
    # The kustomizations it builds that generate Secrets: rendered, those would be plain text.
    secret_generators: tuple[str, ...]
    # The files only this build reads (the kustomization itself excluded: it is rewritten to
    # list the output); ``None`` when the walk ran out of budget.
    frees: tuple[str, ...] | None


class Builds:
    """The kustomization graph of one target, read lazily."""

    def __init__(
        self, target: str, directives: Mapping[str, KustomizationFacts], files: Iterable[str]
    ) -> None:
        self._target = target
        self._directives = directives
        self._file_list = files
        self._budget = MAX_RENDER_WALK
        self._reads: dict[str, _Reads] | None = None
        self._files: frozenset[str] = frozenset()
        self._folders: dict[str, str] = {}  # folder -> its kustomization
        self._inputs: dict[str, tuple[str, str]] | None = None
        self._built: frozenset[str] | None = None
        self._referrers: dict[str, list[str]] | None = None
        self._plans: dict[str, RenderPlan] = {}
        self._under: dict[str, bool] = {}  # folder -> it or a folder above has a kustomization

    @classmethod
    def of(
        cls,
        target: str,
        directives: Iterable[str],
        facts: Mapping[str, FileFacts],
        files: Iterable[str],
    ) -> Builds:
        """The graph of the kustomizations among ``directives`` that were read."""
        read = {
            path: kust
            for path in directives
            if path in facts and (kust := facts[path].kustomization) is not None
        }
        return cls(target, read, files)

    def _graph(self) -> dict[str, _Reads]:
        if self._reads is None:
            self._files = frozenset(self._file_list)
            for path in sorted(self._directives):
                self._folders.setdefault(posixpath.dirname(path), path)
            self._reads = {path: self._resolve(path, k) for path, k in self._directives.items()}
        return self._reads

    def _resolve(self, path: str, kust: KustomizationFacts) -> _Reads:
        folder = posixpath.dirname(path)
        files: list[tuple[str, str]] = []
        directives: list[str] = []
        loose = False
        named = [
            *(("resources", r) for r in kust.resources),
            *(("patches", p) for p in kust.patch_paths),
            *kust.inputs,
        ]
        for field, reference in named:
            found = resolve_reference(folder, reference)
            if found is None:
                continue
            if found in self._folders:
                directives.append(self._folders[found])
                continue
            loose = loose or not is_within(found, folder)
            if found in self._files:  # the files of the target: a build outside it is not ours
                files.append((field, found))
        return _Reads(tuple(files), tuple(directives), loose)

    def input_of(self, path: str) -> tuple[str, str] | None:
        """(kustomization, field) of the first kustomization whose refused field reads ``path``."""
        if self._inputs is None:
            self._inputs = {}
            for directive, reads in sorted(self._graph().items()):
                for field, file in reads.files:
                    if field not in _BUILT_FROM and field != "patches":
                        self._inputs.setdefault(file, (directive, field))
        return self._inputs.get(path)

    def is_built(self, path: str) -> bool:
        """A kustomization lists ``path`` among its resources."""
        if self._built is None:
            self._built = frozenset(
                file
                for reads in self._graph().values()
                for field, file in reads.files
                if field in _BUILT_FROM
            )
        return path in self._built

    def is_orphan(self, path: str) -> bool:
        """A kustomization is in the folder of ``path`` and no kustomization lists it: whatever
        builds that folder (kustomize, or Flux, which then uses that kustomization) never
        builds this file."""
        # Only the file's own folder: one without a kustomization may be built directly (a Flux
        # Kustomization's path), whatever lists the folders above it.
        return not self.is_built(path) and posixpath.dirname(path) in self._folders

    def _under_a_kustomization(self, path: str) -> bool:
        """A folder holding ``path``, in the target, has a kustomization: a build of the target
        root that lists its folders' files itself (as Flux generates) stops there."""
        folder = posixpath.dirname(path)
        walked: list[str] = []
        found = False
        while (known := self._under.get(folder)) is None:  # each folder walked once
            walked.append(folder)
            if folder in self._folders:
                found = True
                break
            if folder == self._target or not folder:
                break
            folder = posixpath.dirname(folder)
        else:
            found = known
        for seen in walked:
            self._under[seen] = found
        return found

    def render_plan(self, path: str) -> RenderPlan:
        """What rendering the kustomization at ``path`` takes; computed once per kustomization."""
        plan = self._plans.get(path)
        if plan is None:
            plan = self._plans[path] = self._plan(path)
        return plan

    def _plan(self, path: str) -> RenderPlan:
        graph = self._graph()
        folder = posixpath.dirname(path)
        output = posixpath.join(folder, "rendered.yaml")
        count = 1
        while output in self._files:  # never render over a file of the tree
            count += 1
            output = posixpath.join(folder, f"rendered-{count}.yaml")
        walked = self._closure(path)
        if walked is None:
            return RenderPlan(output, False, True, (), None)
        directives, files = walked
        features = {d: self._directives[d].features for d in directives}
        helm = any(_HELM.intersection(f) for f in features.values())
        loose = any(graph[d].loose for d in directives)
        secrets = tuple(sorted(d for d, f in features.items() if "secretGenerator" in f))
        kept = self._kept(path, directives, files)
        frees = sorted((directives | files) - kept - {path})
        return RenderPlan(output, helm, loose, secrets, tuple(frees))

    def _closure(self, root: str) -> tuple[set[str], set[str]] | None:
        """The kustomizations and files the build of ``root`` reads, or ``None`` over budget."""
        graph = self._graph()
        directives, files = {root}, set[str]()
        stack = [root]
        while stack:
            reads = graph[stack.pop()]
            self._budget -= len(reads.files) + len(reads.directives) + 1
            if self._budget < 0:
                return None
            files.update(file for _, file in reads.files)
            for child in reads.directives:
                if child not in directives:
                    directives.add(child)
                    stack.append(child)
        return directives, files

    def _kept(self, root: str, directives: set[str], files: set[str]) -> set[str]:
        """What the build of ``root`` reads that something else reads too, with all it reads:
        another kustomization names it, or it is a file under no kustomization (a build that
        lists a folder's files itself, as Flux generates, includes it)."""
        referrers = self._referrer_map()
        inside = directives | files
        seeds = [
            node
            for node in inside - {root}
            if any(r not in directives for r in referrers.get(node, ()))
            or (node in files and not self._under_a_kustomization(node))
        ]
        graph = self._graph()
        kept: set[str] = set(seeds)
        stack = [s for s in seeds if s in directives]
        while stack:
            reads = graph[stack.pop()]
            self._budget -= len(reads.files) + len(reads.directives) + 1
            kept.update(file for _, file in reads.files)
            for child in reads.directives:
                if child not in kept:
                    kept.add(child)
                    stack.append(child)
        return kept

    def _referrer_map(self) -> dict[str, list[str]]:
        if self._referrers is None:
            self._referrers = {}
            for directive, reads in self._graph().items():
                for _, file in reads.files:
                    self._referrers.setdefault(file, []).append(directive)
                for child in reads.directives:
                    self._referrers.setdefault(child, []).append(directive)
        return self._referrers

    def listed_by(self, path: str) -> list[str]:
        """The kustomizations that name the folder of ``path`` (e.g. a Component's users)."""
        return sorted(set(self._referrer_map().get(path, ())))
