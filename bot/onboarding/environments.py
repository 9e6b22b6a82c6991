"""Environments side by side: a folder proposed as the targets below it, not as one (design.md 6.6).
Pure.

``clusters/production`` and ``clusters/staging`` define the same objects, each for its own
cluster. Proposed as one target, ``clusters``, the proposal itself would create duplicate
identities, and the duplicate-identity fix (remove one copy) would delete an environment.
So a folder is split into its child folders when:

- **two of them share identities**: at least half of the smaller one's objects are defined in
  the other too. Folders that only happen to share a Namespace or two (apps of one cluster)
  share far less, and stay one target, where the duplicate is a real issue with a real fix; or
- **two of them are named as environments** (``prod``, ``staging``, ``dev`` ...) and each
  holds objects, when neither reaches outside itself: overlays built on a shared base
  (``apps/production`` listing ``../base``) are not environments of their own.

Each environment is then a candidate of its own, however few its objects; the other child
folders are chosen as any folder is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from bot.gate.content.identity import Identity
from bot.paths import join, path_sort_key

ENVIRONMENT_NAMES: Final = frozenset(
    {
        "prod",
        "production",
        "prd",
        "live",
        "staging",
        "stage",
        "stg",
        "preprod",
        "pre-prod",
        "preproduction",
        "uat",
        "qa",
        "dev",
        "develop",
        "development",
        "sandbox",
    }
)
# Two folders are environments of each other when they share at least this share of the
# smaller one's identities.
SHARED_NUMERATOR: Final = 1
SHARED_DENOMINATOR: Final = 2


@dataclass(frozen=True, slots=True)
class Split:
    """The child folders (full paths, in path order) a folder splits into, and why."""

    environments: tuple[str, ...]
    shared: int  # identities defined in more than one of them; 0 for a split by names

    @property
    def reason(self) -> str:
        if self.shared:
            return (
                f"it merges environments that each define the same objects ({self.shared} "
                "defined more than once): each is a target of its own"
            )
        return "its folders are environments, each a target of its own"


def shared_split(folder: str, identities: Mapping[str, frozenset[Identity]]) -> Split | None:
    """The children of ``folder`` that define mostly the same objects as a sibling, when two or
    more do. ``identities`` maps each child's name ("" for the folder's own files) to the
    identities of its objects."""
    names = sorted((n for n, found in identities.items() if n and found), key=path_sort_key)
    paired: set[str] = set()
    shared: set[Identity] = set()
    for i, one in enumerate(names):
        for other in names[i + 1 :]:
            both = identities[one] & identities[other]
            smaller = min(len(identities[one]), len(identities[other]))
            if both and len(both) * SHARED_DENOMINATOR >= smaller * SHARED_NUMERATOR:
                paired.update((one, other))
                shared.update(both)
    if len(paired) < 2:
        return None
    return Split(tuple(join(folder, n) for n in sorted(paired, key=path_sort_key)), len(shared))


def named_split(folder: str, identities: Mapping[str, frozenset[Identity]]) -> Split | None:
    """The children of ``folder`` named as environments that hold objects, when two or more
    do (whether each stands on its own is the caller's to check)."""
    names = sorted(
        (n for n, found in identities.items() if n and found and n.casefold() in ENVIRONMENT_NAMES),
        key=path_sort_key,
    )
    if len(names) < 2:
        return None
    return Split(tuple(join(folder, name) for name in names), 0)
