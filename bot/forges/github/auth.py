"""GitHub App authentication: the app's JWT, its private key, and cached installation tokens.

The app signs a short JWT with its private key; the JWT buys an installation token (one hour)
for each installation; the installation token authorises everything else, git included.
Neither kind of secret ever appears in an error message or a log line.
"""

from __future__ import annotations

import datetime
import functools
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.errors import PermanentForgeError

# GitHub refuses an app JWT whose exp is more than 10 minutes ahead of its clock. iat is
# backdated a minute for clock drift, and exp - iat = 600 stays within the limit even so.
JWT_BACKDATE = 60
JWT_LIFETIME = 540
# An installation token is reused until this long before it expires, so a token handed to a
# slow job (a large clone) does not expire halfway through it.
TOKEN_REFRESH_MARGIN = 300.0

# POST path -> decoded JSON body; the caller's transport sends "Authorization: Bearer <jwt>"
# and maps HTTP failures to ForgeErrors.
TokenRequest = Callable[[str, str], Any]

_KEY_VARIABLE = "ICHOR_GITHUB_PRIVATE_KEY"


def app_jwt(app_id: str, private_key_pem: str, *, now: float) -> str:
    """The app's RS256 JWT, valid from a minute before ``now`` for ten minutes in all."""
    issued = int(now) - JWT_BACKDATE
    claims = {"iat": issued, "exp": int(now) + JWT_LIFETIME, "iss": app_id}
    try:
        return jwt.encode(claims, _signing_key(private_key_pem), algorithm="RS256")
    except (ValueError, TypeError, jwt.PyJWTError):
        # cryptography's message may quote the PEM it could not read: it is not repeated.
        raise PermanentForgeError(
            "the GitHub App private key cannot sign a JWT: it is not an RSA private key in PEM"
        ) from None


@functools.lru_cache(maxsize=4)
def _signing_key(private_key_pem: str) -> rsa.RSAPrivateKey:
    # Parsing checks the RSA key's consistency, tens of milliseconds: done once per key and
    # process (load_private_key's check at start-up is this same call).
    key = serialization.load_pem_private_key(private_key_pem.encode("ascii"), password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise _NotRsaError
    return key


class _NotRsaError(TypeError):
    """A private key that is not RSA (RS256 needs RSA)."""


def load_private_key(value: str) -> str:
    """The app's private key as PEM text, from PEM text itself or from the path of a PEM file.

    The key is parsed here so a bad one is reported at start-up, not on the first webhook.
    Messages never repeat the value: a key pasted without its BEGIN line would otherwise land
    in the log.
    """
    text = value.strip()
    if not text.startswith("-----BEGIN"):
        path = Path(text).expanduser()
        shown = str(path) if _looks_like_key_path(text) else f"(value not shown, {len(text)} chars)"
        try:
            text = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "unreadable"
            raise PermanentForgeError(
                f"{_KEY_VARIABLE} is neither PEM text (-----BEGIN ...) nor a readable file: "
                f"{shown}: {reason}"
            ) from None
        where = f"the file {shown}"
    else:
        where = _KEY_VARIABLE
    if "\n" not in text and "\\n" in text:
        # Some platforms only take one-line environment values: newlines arrive escaped.
        text = text.replace("\\n", "\n")
    pem = text + "\n"
    try:
        _signing_key(pem)
    except _NotRsaError:
        raise PermanentForgeError(
            f"{where} holds a private key that is not RSA (RS256 needs RSA)"
        ) from None
    except TypeError:
        raise PermanentForgeError(
            f"{where} holds an encrypted private key; give the unencrypted PEM GitHub issued"
        ) from None
    except (ValueError, UnicodeEncodeError):
        raise PermanentForgeError(f"{where} does not hold a readable PEM private key") from None
    return pem


def _looks_like_key_path(text: str) -> bool:
    # Base64 key material contains "/" too, so only an evident file name is shown.
    return not any(c.isspace() for c in text) and text.lower().endswith((".pem", ".key"))


def parse_expiry(value: object) -> float | None:
    """Seconds since the epoch from GitHub's ``expires_at`` (ISO 8601, ``Z``); None if unusable."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return parsed.timestamp()


class InstallationTokens:
    """Installation tokens by installation id, each reused until 5 minutes before it expires.

    One lock per installation makes concurrent callers share one token request. A token is an
    opaque non-empty string: GitHub has changed their length and prefix before and says it
    will again. A token whose ``expires_at`` cannot be read is used once and not cached.
    """

    def __init__(
        self,
        *,
        app_id: str,
        private_key_pem: str,
        request: TokenRequest,
        clock: Callable[[], float] = time.time,
        refresh_margin: float = TOKEN_REFRESH_MARGIN,
    ) -> None:
        self._app_id = app_id
        self._key = private_key_pem
        self._request = request
        self._clock = clock
        self._margin = refresh_margin
        self._cached: dict[int, tuple[str, float]] = {}  # id -> (token, refresh at)
        self._locks: dict[int, threading.Lock] = {}

    def _fresh(self, installation_id: int) -> str | None:
        cached = self._cached.get(installation_id)
        if cached is not None and self._clock() < cached[1]:
            return cached[0]
        return None

    def get(self, installation_id: int) -> str:
        """A usable token for ``installation_id``, requesting one only when none is fresh."""
        token = self._fresh(installation_id)
        if token is not None:
            return token
        lock = self._locks.setdefault(installation_id, threading.Lock())
        with lock:
            # Whoever held the lock before us may have fetched one already.
            token = self._fresh(installation_id)
            if token is not None:
                return token
            return self._fetch(installation_id)

    def signed_jwt(self) -> str:
        """A fresh JWT of the app, for what it asks as itself (a token, ``GET /app``)."""
        return app_jwt(self._app_id, self._key, now=self._clock())

    def _fetch(self, installation_id: int) -> str:
        path = f"/app/installations/{int(installation_id)}/access_tokens"
        body = self._request(path, self.signed_jwt())
        token = body.get("token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise PermanentForgeError(f"GitHub POST {path}: the response holds no token")
        expires = parse_expiry(body.get("expires_at"))
        if expires is not None:
            self._cached[installation_id] = (token, expires - self._margin)
        else:
            self._cached.pop(installation_id, None)
        return token

    def invalidate(self, installation_id: int, token: str | None = None) -> None:
        """Forget the cached token (only if it is still ``token``, when given): it was refused.

        The guard keeps a concurrent caller's newer token when an old one is reported late.
        """
        cached = self._cached.get(installation_id)
        if cached is not None and (token is None or cached[0] == token):
            del self._cached[installation_id]
