"""Target names for proposed paths (design.md 2): valid, unique, and read from the path. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

MAX_NAME: Final = 63
ROOT_NAME: Final = "root"
_FALLBACK_NAME: Final = "target"  # a path with no [a-z0-9] at all
_OUTSIDE_NAME = re.compile(r"[^a-z0-9]+")


def target_names(paths: Sequence[str], *, taken: Sequence[str] = ()) -> list[str]:
    """A valid, unique target name for each path: ``clusters/prod`` becomes ``clusters-prod``.
    A name already given (or in ``taken``) gets ``-2``, ``-3`` ...; paths that are their name
    but for ``/`` choose first, so ``team-a`` keeps its name beside ``Team.A``."""
    bases = [name_for(path) for path in paths]
    exact = [i for i, path in enumerate(paths) if bases[i] == path.replace("/", "-")]
    rest = [i for i in range(len(paths)) if bases[i] != paths[i].replace("/", "-")]
    used = set(taken)
    names = [""] * len(paths)
    for i in exact + rest:
        name, n = bases[i], 1
        while name in used:
            n += 1
            suffix = f"-{n}"
            name = bases[i][: MAX_NAME - len(suffix)].rstrip("-") + suffix
        used.add(name)
        names[i] = name
    return names


def name_for(path: str) -> str:
    """The name a path suggests: lowercased, every run outside ``[a-z0-9]`` one ``-``."""
    if path == "":
        return ROOT_NAME
    name = _OUTSIDE_NAME.sub("-", path.lower()).strip("-")[:MAX_NAME].rstrip("-")
    return name or _FALLBACK_NAME  # so always TARGET_NAME_PATTERN
