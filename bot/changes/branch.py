"""The bot's branch names: ``ichor/<verb>-<namespace>-<name>``, one per change, so a second
identical request finds the first one's pull request instead of opening another.

The namespace and name come from a comment or an API client: anything outside ``[a-z0-9-]``
or a name over 100 bytes is replaced by a sanitized, truncated name plus ``-`` and eight hex
characters of the SHA-256 of the full name, so two different requests never share a branch
and every branch is a valid, short ref.
"""

from __future__ import annotations

import hashlib
import re

PREFIX = "ichor/"
MAX_BRANCH_BYTES = 100
CLUSTER = "_cluster"  # the namespace part of a cluster-scoped object's branch
_OUTSIDE = re.compile(r"[^a-z0-9-]+")
_DASHES = re.compile(r"-{2,}")
_HASH_CHARS = 8


def _clean(part: str) -> str:
    return _DASHES.sub("-", _OUTSIDE.sub("-", part.lower())).strip("-")


def _bounded(parts: list[str], fixed: frozenset[int] = frozenset()) -> str:
    """``ichor/`` + the parts joined by ``-``; parts whose index is in ``fixed`` are the bot's
    own words, kept as written."""
    full = PREFIX + "-".join(parts)
    cleaned = [p if i in fixed else _clean(p) for i, p in enumerate(parts)]
    name = PREFIX + "-".join(p for p in cleaned if p)
    if name == full and len(full.encode()) <= MAX_BRANCH_BYTES:
        return full
    digest = hashlib.sha256(full.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]
    room = MAX_BRANCH_BYTES - len(digest) - 1
    return name[:room].rstrip("-") + "-" + digest


def change_branch(verb: str, namespace: str | None, name: str) -> str:
    """``ichor/approve-web-frontend``; ``namespace`` None is a cluster-scoped object."""
    if namespace is None:
        return _bounded([verb, CLUSTER, name], fixed=frozenset({0, 1}))
    return _bounded([verb, namespace, name], fixed=frozenset({0}))


def ignore_branch(target: str, number: int) -> str:
    """``ichor/ignore-<target>-pr<N>``: the ``/ignore`` of pull request ``number``."""
    return _bounded(["ignore", target, f"pr{int(number)}"], fixed=frozenset({0, 2}))
