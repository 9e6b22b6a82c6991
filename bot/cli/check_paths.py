"""``check PATH...``: which repository the paths are in, and which targets they select.

pre-commit (and a person) passes files, not targets. The gate's verdict is per target, so a
path selects the whole target that holds it (or every target under a directory); a path in no
target is skipped and said so. ``.ichor.yaml`` selects every target, and a target's
capabilities file selects that target, since changing either can change its verdict.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.errors import UsageError
from bot.gate.policy import CONFIG_FILE, TargetPolicy
from bot.git.snapshot import Snapshot
from bot.paths import is_within

# What marks a repository's root when walking up from a path.
_ROOT_MARKERS = (CONFIG_FILE, ".ichor.yml", ".git")


@dataclass(frozen=True, slots=True)
class CheckScope:
    """The repository on disk, and the repo-relative paths named (None: the whole repository)."""

    repo: str
    paths: tuple[str, ...] | None
    shown: tuple[str, ...] = ()  # the arguments as typed, for messages, parallel to ``paths``


def is_repository_root(directory: Path) -> bool:
    return any((directory / marker).exists() for marker in _ROOT_MARKERS)


def locate(arguments: Sequence[str], cwd: Path) -> CheckScope:
    """One repository root argument (or none) is the whole repository, as it always was; any
    other paths are files or directories inside one repository, found by walking up."""
    if not arguments:
        arguments = (".",)
    only = cwd / arguments[0]
    if len(arguments) == 1 and only.is_dir() and is_repository_root(only):
        return CheckScope(arguments[0], None)
    absolute = [Path(os.path.normpath(cwd / argument)) for argument in arguments]
    root = _find_root(absolute[0])
    if root is None:
        if len(arguments) == 1 and absolute[0].is_dir():
            return CheckScope(arguments[0], None)  # its own errors say what is missing
        if not os.path.lexists(absolute[0]):  # the typo, before the repository it is not in
            raise UsageError(f"{arguments[0]}: no such file or directory")
        raise UsageError(
            f"{arguments[0]} is in no repository: no {CONFIG_FILE} or .git in its directory "
            "or above"
        )
    relative: list[str] = []
    for argument, path in zip(arguments, absolute, strict=True):
        try:
            inside = path.relative_to(root)
        except ValueError:
            raise UsageError(f"{argument} is outside the repository {root}") from None
        relative.append("" if str(inside) == "." else inside.as_posix())
    return CheckScope(str(root), tuple(relative), tuple(arguments))


def _find_root(path: Path) -> Path | None:
    start = path if path.is_dir() else path.parent
    for directory in (start, *start.parents):
        if is_repository_root(directory):
            return directory
    return None


def require_present(snapshot: Snapshot, scope: CheckScope, rev: str | None) -> None:
    """A named path must exist in the tree being read: a typo must not pass as 'nothing to do'."""
    assert scope.paths is not None
    for path, shown in zip(scope.paths, scope.shown, strict=True):
        if not path or snapshot.get(path) is not None:
            continue
        if next(iter(snapshot.under(path)), None) is None:
            where = f" at {rev}" if rev is not None else ""
            raise UsageError(f"{shown}: no such file or directory in {scope.repo}{where}")


@dataclass(frozen=True, slots=True)
class Selection:
    targets: tuple[TargetPolicy, ...]
    skipped: tuple[str, ...]  # the arguments in no target, as typed


def select_targets(
    targets: Sequence[TargetPolicy], paths: Sequence[str], shown: Sequence[str]
) -> Selection:
    """The targets (in configuration order) that hold, lie under, or are configured by a path."""
    chosen: set[str] = set()
    skipped: list[str] = []
    for path, argument in zip(paths, shown, strict=True):
        hits = [t.name for t in targets if _selects(path, t)]
        if not hits:
            skipped.append(argument)
        chosen.update(hits)
    return Selection(tuple(t for t in targets if t.name in chosen), tuple(skipped))


def _selects(path: str, target: TargetPolicy) -> bool:
    if path == CONFIG_FILE or path == target.capabilities:
        return True
    return is_within(path, target.path) or is_within(target.path, path)
