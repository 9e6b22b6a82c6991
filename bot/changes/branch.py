"""The bot's branch names (design.md 6): one per change, so a second identical request finds the
first one's pull request instead of opening another, and never one for two objects.

An object has two names. The readable one, ``ichor/<verb>-<namespace>-<name>`` (``_cluster``
for a cluster-scoped object), is what people see in the common case. It cannot tell objects
apart: it joins parts that may hold ``-`` themselves (ConfigMaps ``web-a/b`` and ``web/a-b``),
it has no kind (a Deployment and a Service ``web/frontend``), and one identity may live in two
targets. So the change engine takes it only when no other object holds it (no other object's
pull request is open on it, and its tip is not another change's commit: a commit's
``Ichor-Change`` trailer says whose it is). Otherwise, and whenever the readable name cannot
be written as it is (a character outside ``[a-z0-9-]``, over 100 bytes, or ending like a hash),
the object's branch is the hashed one: the readable part sanitized and cut, then eight hex
characters of the SHA-256 of the target and whole identity, which depends on nothing else.

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


_LOOKS_HASHED = re.compile(r"-[0-9a-f]{8}")


def readable_branch(verb: str, identity: Identity) -> str | None:
    """``ichor/approve-web-frontend``, when the namespace and name are written as they are
    (``[a-z0-9-]``, within 100 bytes, and not ending like a hashed name, which another object's
    hashed branch could then be); None otherwise. ``verb`` is the bot's own word."""
    _, _, namespace, name = identity
    parts = (verb, namespace or CLUSTER, name)
    if not all(parts) or any(p != _clean(p) for p in (namespace, name) if p):
        return None
    readable = PREFIX + "-".join(parts)
    if len(readable) > MAX_BRANCH_BYTES or _LOOKS_HASHED.search(readable[-9:]):
        return None
    return readable


def change_branch(verb: str, target: str, identity: Identity) -> str:
    """``ichor/approve-web-frontend-1a2b3c4d``: the object's hashed branch, a function of its
    target and identity alone (see :func:`readable_branch` for the name tried first)."""
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
