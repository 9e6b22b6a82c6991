"""What an approval is: who approved which exact objects, at which head."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class Fingerprint:
    """One managed object as it is at a revision: its identity as the gate writes it
    (``Kind.group namespace/name``, :func:`bot.gate.content.identity.identity_text`) and the
    SHA-256 of its document's canonical JSON. A change to the object is a new fingerprint, so
    an old approval no longer covers it."""

    identity: str
    digest: str


@dataclass(frozen=True, slots=True)
class Approval:
    """``approver`` approved exactly ``fingerprints`` at ``head_sha``. ``source`` names what
    asked (a comment id, or ``check_run:<id>`` for the GitHub button); ``reply`` is the bot's
    reply comment carrying the hidden marker, once posted."""

    approver: str
    head_sha: str
    fingerprints: frozenset[Fingerprint]
    source: str
    reply: str | None = None
