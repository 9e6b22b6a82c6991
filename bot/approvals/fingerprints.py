"""Fingerprints of managed objects (design.md 5.1): the identity as the gate writes it, and the
SHA-256 of the document's canonical JSON.

The digest itself is computed by the gate when it reads a strict target's file
(``ObjectFacts.digest``, cached with the file's facts), so an approval check parses nothing
again; this module names the one digest function and the one identity rendering that every
fingerprint is made of.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.approvals.approval import Fingerprint
from bot.gate.content.digest import canonical_json as canonical_json
from bot.gate.content.digest import document_digest as document_digest
from bot.gate.content.identity import Identity
from bot.gate.content.identity import identity_text as identity_text
from bot.gate.report import ManagedObject


def fingerprint_of(identity: Identity, digest: str) -> Fingerprint:
    return Fingerprint(identity_text(identity), digest)


def fingerprint(obj: ManagedObject) -> Fingerprint:
    """The fingerprint of a managed object as the gate read it."""
    return fingerprint_of(obj.identity, obj.digest)


def fingerprints(objects: Iterable[ManagedObject]) -> frozenset[Fingerprint]:
    return frozenset(fingerprint(o) for o in objects)
