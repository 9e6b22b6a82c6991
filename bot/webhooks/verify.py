"""Webhook authenticity, checked on the raw body bytes before anything is parsed.

Each forge accepts a sequence of secrets so one can be rotated without dropping deliveries:
any one matching passes. Comparisons are constant-time (``hmac.compare_digest``) and every
configured secret is tried, so timing tells neither whether nor which secret matched. A
``Verification.reason`` says what failed and never contains a secret or a signature.

``headers`` must have lower-case keys (the caller lower-cases, or passes a case-insensitive
mapping such as Starlette's ``Headers``). Values are trimmed of spaces and tabs at both ends:
they are not part of a field value (RFC 9110), and HTTP parsers differ in which end they trim.
There is no clock here: GitLab's signed timestamp is checked against ``now`` only when the
caller passes it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

_HEX_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
_TIMESTAMP = re.compile(r"[0-9]{1,15}")
_NO_MATCH = "signature does not match any configured secret"
# Standard Webhooks' own default: a signed delivery older or newer than this is a replay.
DEFAULT_TOLERANCE_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class Verification:
    ok: bool
    reason: str


def verify_github(
    body: bytes, headers: Mapping[str, str], secrets: Sequence[str | bytes]
) -> Verification:
    """``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>``."""
    keys = _keys(secrets)
    if not keys:
        return _fail("no secret configured for github")
    header = _field(headers, "x-hub-signature-256")
    if header is None:
        return _fail("missing X-Hub-Signature-256 (no secret set on the hook?)")
    if not header:
        return _fail("X-Hub-Signature-256 is empty")
    algorithm, _, digest = header.partition("=")
    if algorithm != "sha256" or not _HEX_SHA256.fullmatch(digest):
        return _fail("X-Hub-Signature-256 is not sha256=<64 hex digits>")
    return _match_body(keys, body, bytes.fromhex(digest), "X-Hub-Signature-256")


def verify_gitea(
    body: bytes, headers: Mapping[str, str], secrets: Sequence[str | bytes]
) -> Verification:
    """``X-Forgejo-Signature``, else ``X-Gitea-Signature``: bare hex HMAC-SHA256 of the body."""
    keys = _keys(secrets)
    if not keys:
        return _fail("no secret configured for gitea")
    name = "X-Forgejo-Signature"
    header = _field(headers, "x-forgejo-signature")
    if header is None:
        name, header = "X-Gitea-Signature", _field(headers, "x-gitea-signature")
    if header is None:
        return _fail("missing X-Gitea-Signature / X-Forgejo-Signature")
    if not header:
        # Gitea signs nothing and sends the header empty when the hook has no secret.
        return _fail(f"{name} is empty (no secret set on the hook?)")
    if not _HEX_SHA256.fullmatch(header):
        return _fail(f"{name} is not 64 hex digits")
    return _match_body(keys, body, bytes.fromhex(header), name)


def verify_gitlab(
    body: bytes,
    headers: Mapping[str, str],
    secrets: Sequence[str | bytes],
    signing_secrets: Sequence[str | bytes] = (),
    *,
    now: float | None = None,
    tolerance: float = DEFAULT_TOLERANCE_SECONDS,
) -> Verification:
    """``X-Gitlab-Token`` equal to a secret, and a valid ``webhook-signature`` when signing
    secrets are configured (either kind alone is enough configuration; both are required when
    both are configured).

    GitLab's signing token follows Standard Webhooks: ``whsec_<base64 key>``, HMAC-SHA256 over
    ``{webhook-id}.{webhook-timestamp}.{body}``, sent as space-separated ``v1,<base64>``.
    ``now`` (Unix seconds) enables the ``tolerance`` window on ``webhook-timestamp``.
    """
    tokens, signing = _keys(secrets), _keys(signing_secrets)
    if not tokens and not signing:
        return _fail("no secret configured for gitlab")
    if tokens:
        token = _field(headers, "x-gitlab-token")
        if token is None:
            return _fail("missing X-Gitlab-Token (no secret token set on the hook?)")
        if not token:
            return _fail("X-Gitlab-Token is empty")
        # Hashing first makes the comparison independent of the secrets' lengths too.
        given = hashlib.sha256(_bytes(token)).digest()
        if not _any_equal([hashlib.sha256(key).digest() for key in tokens], [given]):
            return _fail("X-Gitlab-Token does not match any configured secret")
    if signing:
        failure = _gitlab_signature(body, headers, signing, now, tolerance)
        if failure is not None:
            return _fail(failure)
    return Verification(True, "verified")


def _gitlab_signature(
    body: bytes,
    headers: Mapping[str, str],
    secrets: list[bytes],
    now: float | None,
    tolerance: float,
) -> str | None:
    """What is wrong with the signature, or None when it is valid."""
    webhook_id = _field(headers, "webhook-id") or ""
    timestamp = _field(headers, "webhook-timestamp") or ""
    signature = _field(headers, "webhook-signature") or ""
    named = (
        ("webhook-id", webhook_id),
        ("webhook-timestamp", timestamp),
        ("webhook-signature", signature),
    )
    missing = [name for name, value in named if not value]
    if missing:
        return f"missing {', '.join(missing)} (no signing token set on the hook?)"
    if not _TIMESTAMP.fullmatch(timestamp):
        return "webhook-timestamp is not Unix seconds"
    if now is not None and abs(now - int(timestamp)) > tolerance:
        return "webhook-timestamp is outside the allowed window (replayed or clock skew?)"
    keys = []
    for secret in secrets:
        key = _signing_key(secret)
        if key is None:
            return "a configured gitlab signing secret is not whsec_<base64>"
        keys.append(key)
    given = [digest for entry in signature.split() if (digest := _v1_digest(entry)) is not None]
    if not given:
        return "webhook-signature has no v1,<base64> entry"
    signed = _bytes(f"{webhook_id}.{timestamp}.") + body
    expected = [hmac.new(key, signed, hashlib.sha256).digest() for key in keys]
    return None if _any_equal(expected, given) else _NO_MATCH


def _field(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    return None if value is None else value.strip(" \t")


def _signing_key(secret: bytes) -> bytes | None:
    encoded = secret.removeprefix(b"whsec_")
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None
    return key or None


def _v1_digest(entry: str) -> bytes | None:
    version, _, value = entry.partition(",")
    if version != "v1":
        return None
    try:
        digest = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    return digest if len(digest) == hashlib.sha256().digest_size else None


def _match_body(keys: list[bytes], body: bytes, given: bytes, header: str) -> Verification:
    expected = [hmac.new(key, body, hashlib.sha256).digest() for key in keys]
    if _any_equal(expected, [given]):
        return Verification(True, "verified")
    return _fail(f"{header}: {_NO_MATCH}")


def _any_equal(expected: list[bytes], given: list[bytes]) -> bool:
    # Every pair is compared: no early exit that would time which secret matched.
    matched = False
    for mine in expected:
        for theirs in given:
            matched |= hmac.compare_digest(mine, theirs)
    return matched


def _keys(secrets: Sequence[str | bytes]) -> list[bytes]:
    # A bare string is a Sequence of one-character secrets: a caller bug, never a config.
    if isinstance(secrets, str | bytes):
        raise TypeError("secrets must be a sequence of secrets, not a single string")
    return [_bytes(secret) for secret in secrets if secret]


def _bytes(value: str | bytes) -> bytes:
    # surrogatepass keeps the encoding one-to-one for any str a header parser may produce.
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")


def _fail(reason: str) -> Verification:
    return Verification(False, reason)
