"""The bot's branch names (design.md 6): one per change, so a second identical request finds the
first one's pull request instead of opening another, and never one for two objects.

An object's branch is ``ichor/<verb>-<namespace>-<name>-<hash>``: the readable part for
people, then eight hex characters of the SHA-256 of the object's target and whole identity
(group, kind, namespace, name). The readable part alone cannot tell objects apart: it joins
parts that may hold ``-`` themselves (ConfigMaps ``web-a/b`` and ``web/a-b``), it has no kind
(any namespace and name may be another kind's too: a Deployment and a Service
``web/frontend``), and one identity may live in two targets. So every object's branch carries
the hash, which depends on the target and identity alone: the same object gets the same
branch whatever else is open, and the readable part is free to be sanitized (``[a-z0-9-]``,
``_cluster`` for a cluster-scoped object) and cut to 100 bytes.

``/ignore`` branches are ``ichor/ignore-<target>-pr<N>``: the target is a name from
``.ichor.yaml`` and ``N`` a number, read from the right; a target outside ``[a-z0-9-]``, or
too long, is sanitized and cut, plus the hash of the full name.
"""

from __future__ import annotations

import hashlib
import json
import re

from bot.gate.content.identity import Identity

PREFIX = "ichor/"
MAX_BRANCH_BYTES = 100
CLUSTER = "_cluster"  # the namespace part of a cluster-scoped object's branch
HASH_CHARS = 8
_OUTSIDE = re.compile(r"[^a-z0-9-]+")
_DASHES = re.compile(r"-{2,}")


def _clean(part: str) -> str:
    return _DASHES.sub("-", _OUTSIDE.sub("-", part.lower())).strip("-")


def identity_key(target: str, identity: Identity) -> str:
    """The object of a change as one unambiguous ASCII line: a JSON array (target, group,
    kind, namespace, name), the namespace empty for a cluster-scoped object. One identity
    may live in two targets (prod and staging), two files a change edits apart. What the
    hash is of, and what the pull request's marker names."""
    group, kind, namespace, name = identity
    parts = [target, group, kind, namespace, name]
    return json.dumps(parts, ensure_ascii=True, separators=(",", ":"))


def change_branch(verb: str, target: str, identity: Identity) -> str:
    """``ichor/approve-web-frontend-1a2b3c4d``: ``verb`` is the bot's own word."""
    _, _, namespace, name = identity
    readable = PREFIX + "-".join(
        p for p in (verb, _clean(namespace) if namespace else CLUSTER, _clean(name)) if p
    )
    return _hashed(readable, identity_key(target, identity))


def ignore_branch(target: str, number: int) -> str:
    """``ichor/ignore-<target>-pr<N>``: the ``/ignore`` of pull request ``number``."""
    full = f"{PREFIX}ignore-{target}-pr{int(number)}"
    cleaned = PREFIX + "-".join(p for p in ("ignore", _clean(target), f"pr{int(number)}") if p)
    if cleaned == full and len(full.encode()) <= MAX_BRANCH_BYTES:
        return full
    return _hashed(cleaned, full)


def _hashed(readable: str, full: str) -> str:
    """``readable`` (ASCII), cut so that ``-`` and the hash of ``full`` fit in 100 bytes."""
    digest = hashlib.sha256(full.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]
    room = MAX_BRANCH_BYTES - len(digest) - 1
    return readable[:room].rstrip("-") + "-" + digest
