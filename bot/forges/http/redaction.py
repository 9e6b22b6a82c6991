"""Every form a forge credential can take in a message, and cutting them out of text.

A token travels as itself (``token T``, ``Bearer T``, ``PRIVATE-TOKEN: T``) and inside HTTP
Basic credentials, base64 of ``user:password``, where it may be either half: GitHub and GitLab
put it in the password (``x-access-token:T``, ``oauth2:T``), Gitea and Forgejo in the user
name (``T:x-oauth-basic``, or ``T:``). Whatever echoes a request (a proxy, git, httpx) may
show any of these, with or without base64 padding.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
from collections.abc import Iterable

from bot.errors import ForgeError, ForgeStatusError

REDACTED = "<redacted>"
# The fixed halves of the Basic forms forges use; they are not secrets themselves.
_USERS = ("x-access-token", "oauth2", "git", "token", "x-token-auth")
_PASSWORDS = ("", "x-oauth-basic")
_MIN_SECRET = 4  # shorter strings are not cut: they would mangle ordinary words


def token_forms(token: str) -> set[str]:
    """The token and every Basic credential made of it with a usual fixed half."""
    if not token:
        return set()
    pairs = {f"{user}:{token}" for user in _USERS}
    pairs |= {f"{token}:{password}" for password in _PASSWORDS}
    found = {token}
    for pair in pairs:
        encoded = base64.b64encode(pair.encode()).decode("ascii")
        found |= {encoded, encoded.rstrip("=")}
    return found


def header_forms(header: str) -> set[str]:
    """An ``Authorization: <scheme> <credential>`` header's forms, and its token's."""
    value = header.partition(":")[2].strip()
    scheme, _, param = value.partition(" ")
    param = param.strip()
    found = {header, value, param}
    tokens = {param}
    if scheme.lower() == "basic":
        with contextlib.suppress(binascii.Error, UnicodeDecodeError):
            decoded = base64.b64decode(param, validate=True).decode()
            found.add(decoded)
            user, _, password = decoded.partition(":")
            # Either half may be the token: drop only the known fixed ones.
            tokens = {half for half in (user, password) if half not in (*_USERS, *_PASSWORDS)}
    for token in tokens:
        found |= token_forms(token)
    return found


def secrets_list(forms: Iterable[str]) -> tuple[str, ...]:
    """Longest first, so a form is cut whole before a shorter one inside it is."""
    return tuple(sorted({s for s in forms if len(s) >= _MIN_SECRET}, key=len, reverse=True))


def scrub(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def redact(error: ForgeError, secrets: Iterable[str]) -> ForgeError:
    """``error`` with every secret cut from its text (and a status error's ``message``)."""
    secrets = tuple(secrets)
    text = str(error)
    scrubbed = scrub(text, secrets)
    if scrubbed != text:
        error.args = (scrubbed,)
    if isinstance(error, ForgeStatusError):
        error.message = scrub(error.message, secrets)
    return error
