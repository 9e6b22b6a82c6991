"""Which change a pull request is for (DESIGN 6): the hidden first line of an object's change
pull request names the verb and the object's whole identity."""

from __future__ import annotations

from bot.changes.branch import identity_key
from bot.gate.content.identity import Identity


def object_marker(verb: str, identity: Identity) -> str:
    """``<!-- ichor:change delete ["apps","Deployment","web","frontend"] -->``: JSON, ASCII,
    with nothing that could end the comment early."""
    key = identity_key(identity)
    escaped = key.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"<!-- ichor:change {verb} {escaped} -->"
