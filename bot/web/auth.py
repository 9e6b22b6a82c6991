"""Optional basic auth for the status page and ``/metrics`` (``ICHOR_STATUS_AUTH=user:password``).

Webhooks carry their own signatures, the change API its own bearer tokens (in the same
``Authorization`` header) and probes must stay reachable, so ``/healthz``, ``/readyz``,
``/webhooks/...`` and ``/api/v1/...`` are never behind it. Both parts are compared in constant
time, through fixed-length digests, so timing tells neither which part failed nor its length.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from bot.errors import UsageError

OPEN_PATHS = ("/healthz", "/readyz")
OPEN_PREFIXES = ("/webhooks/", "/api/v1/")
_CHALLENGE = [
    (b"www-authenticate", b'Basic realm="ichor-bot", charset="UTF-8"'),
    (b"content-type", b"text/plain; charset=utf-8"),
    (b"content-length", b"24"),
]


@dataclass(frozen=True, slots=True)
class BasicAuth:
    user_digest: bytes
    password_digest: bytes

    @classmethod
    def parse(cls, spec: str) -> BasicAuth:
        user, sep, password = spec.partition(":")
        if not sep or not user or not password:
            raise UsageError("ICHOR_STATUS_AUTH must be user:password, both non-empty")
        return cls(_digest(user.encode()), _digest(password.encode()))

    def allows(self, authorization: bytes | None) -> bool:
        """Whether an ``Authorization`` header value names this user and password."""
        scheme, _, encoded = (authorization or b"").strip().partition(b" ")
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True)
        except (binascii.Error, ValueError):
            decoded = b""
        user, _, password = decoded.partition(b":")
        user_ok = hmac.compare_digest(_digest(user), self.user_digest)
        password_ok = hmac.compare_digest(_digest(password), self.password_digest)
        return scheme.lower() == b"basic" and user_ok & password_ok


def protected(path: str) -> bool:
    return path not in OPEN_PATHS and not path.startswith(OPEN_PREFIXES)


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


class StatusAuthMiddleware:
    """Asks for ``auth`` on every HTTP path :func:`protected` names."""

    def __init__(self, app: ASGIApp, auth: BasicAuth) -> None:
        self.app = app
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not protected(scope["path"]):
            await self.app(scope, receive, send)
            return
        header = next((v for k, v in scope["headers"] if k == b"authorization"), None)
        if self.auth.allows(header):
            await self.app(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": 401, "headers": _CHALLENGE})
        await send({"type": "http.response.body", "body": b"authentication required\n"})
