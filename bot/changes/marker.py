"""Which change a pull request is for (design.md 6): the hidden first line of an object's change
pull request names the verb and the object's whole identity, and a pull request found open on
the object's branch is this change's only when that line says so.

The branch alone cannot be trusted with it: a person may open a pull request from it or edit
the bot's description, and eight hex characters of a hash can, however rarely, meet. A pull
request that names another object, or none, is never answered as this object's, and the
branch under it is never replaced while it is open.
"""

from __future__ import annotations

import json
import re

from bot.changes.branch import identity_key
from bot.gate.content.identity import Identity, identity_text

_MARKED = re.compile(r"<!-- ichor:change ([a-z]+) (\[.*\]) -->")


# The object of a change: its target and identity.
Subject = tuple[str, Identity]


def object_marker(verb: str, target: str, identity: Identity) -> str:
    """``<!-- ichor:change delete ["prod","apps","Deployment","web","frontend"] -->``: JSON,
    ASCII, with nothing that could end the comment early."""
    key = identity_key(target, identity)
    escaped = key.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"<!-- ichor:change {verb} {escaped} -->"


def marked_object(body: str) -> tuple[str, Subject] | None:
    """The verb, target and identity the body's marker names; None when no line is one
    marker, or several name different changes (a person's pull request, an /ignore, an
    edited body, a marker written before markers named the target)."""
    found: set[tuple[str, Subject]] = set()
    for line in body.splitlines():
        marked = _MARKED.fullmatch(line.strip())
        if marked is None:
            continue
        try:
            parts = json.loads(marked[2])
        except (ValueError, RecursionError):  # a person may have written anything here
            return None
        if not isinstance(parts, list) or len(parts) != 5:
            return None
        if not all(isinstance(p, str) for p in parts):
            return None
        found.add((marked[1], (parts[0], (parts[1], parts[2], parts[3], parts[4]))))
    return found.pop() if len(found) == 1 else None


def not_this_change(body: str | None, verb: str, target: str, identity: Identity) -> str | None:
    """Why a pull request whose description is ``body`` is not the one for ``verb`` on
    ``identity`` in ``target``; None when its marker names exactly that."""
    named = marked_object(body or "")
    if named == (verb, (target, identity)):
        return None
    if named is None:
        return "its description does not say which object it is for: was it edited?"
    verb_named, (target_named, identity_named) = named
    return f"it is for {verb_named} {identity_text(identity_named)} in {target_named}"


def taken_branch(
    url: str, branch: str, verb: str, target: str, identity: Identity, why: str
) -> str:
    """The refusal when another change's pull request ``url`` is open on ``branch``."""
    return (
        f"{url} is open on {branch}, and it is not the pull request for {verb} "
        f"{identity_text(identity)} in {target} ({why}): nothing was pushed while it is open"
    )


TRAILER = "Ichor-Change"
_TRAILER_LINE = re.compile(rf"{TRAILER}: ([a-z]+) (\[.*\])")


def change_trailer(verb: str, target: str, identity: Identity) -> str:
    """``Ichor-Change: delete ["prod","apps","Deployment","web","frontend"]``: the last line of
    an object change's commit, which says whose the branch is while no pull request is open on
    it yet (it is opened after the push, outside the repository's lock)."""
    return f"{TRAILER}: {verb} {identity_key(target, identity)}"


def trailer_change(message: str) -> tuple[str, Subject] | None:
    """The verb, target and identity a commit message's ``Ichor-Change`` trailer names; None
    when it has none, or a malformed one."""
    for line in reversed(message.splitlines()):
        found = _TRAILER_LINE.fullmatch(line.strip())
        if found is None:
            continue
        try:
            parts = json.loads(found[2])
        except (ValueError, RecursionError):
            return None
        if isinstance(parts, list) and len(parts) == 5 and all(isinstance(p, str) for p in parts):
            return found[1], (parts[0], (parts[1], parts[2], parts[3], parts[4]))
        return None
    return None
