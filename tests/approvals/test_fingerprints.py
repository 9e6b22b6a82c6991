"""A fingerprint is the gate's identity text and the digest of the object's document."""

from __future__ import annotations

from bot.approvals.approval import Fingerprint
from bot.approvals.fingerprints import document_digest, fingerprint, fingerprints, identity_text
from bot.gate.report import ManagedObject

WEB = ManagedObject(("apps", "Deployment", "prod", "web"), "t/web.yaml", 1, "a" * 64)


def test_a_fingerprint_is_the_identity_text_and_the_digest() -> None:
    assert fingerprint(WEB) == Fingerprint("Deployment.apps prod/web", "a" * 64)
    assert fingerprint(WEB).identity == identity_text(WEB.identity) == WEB.shown


def test_fingerprints_of_many_objects() -> None:
    other = ManagedObject(("", "ConfigMap", "prod", "web"), "t/cm.yaml", 1, "b" * 64)
    assert fingerprints([WEB, other, WEB]) == {
        Fingerprint("Deployment.apps prod/web", "a" * 64),
        Fingerprint("ConfigMap prod/web", "b" * 64),
    }


def test_the_digest_function_is_the_gates() -> None:
    assert document_digest({"a": 1}) == document_digest({"a": 1})
    assert len(document_digest({"a": 1})) == 64
