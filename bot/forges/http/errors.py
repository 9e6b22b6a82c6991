"""What an HTTP error status from a forge means, as one :class:`bot.errors.ForgeError`.

Pure. 5xx and 429 are transient (worth retrying, after ``retry_after`` when the server named a
wait); every other status is a :class:`bot.errors.ForgeStatusError` carrying the status, so a
caller can treat a 404 or a 409 as the answer it is. An adapter adds only what is its forge's:
which other answers mean "slow down", and a hint for a refused token.

The forge's own message is redacted *before* it is shortened: a credential cut in half would
no longer be recognised, and its first half would be shown.
"""

from __future__ import annotations

import http
from collections.abc import Iterable

from bot.errors import ForgeError, ForgeStatusError, TransientForgeError
from bot.forges.clipping import clip
from bot.forges.http.redaction import scrub

DETAIL_LIMIT = 300  # characters of the forge's message kept in an error text


def phrase(status: int) -> str:
    """The status's reason phrase; empty for a status http.HTTPStatus does not know."""
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def detail(message: str, secrets: Iterable[str] = ()) -> str:
    """The forge's message on one line, credentials cut out, then shortened."""
    return clip(scrub(" ".join(message.split()), secrets), DETAIL_LIMIT, note="")


def http_error(
    where: str,
    status: int,
    message: str,
    *,
    secrets: Iterable[str] = (),
    retry_after: float | None = None,
    transient: bool = False,
    hint: str = "",
) -> ForgeError:
    """The error for ``status`` answered to ``where`` (e.g. ``"Gitea GET /repos/o/r"``).

    ``transient`` marks an answer the forge means as "slow down" beyond 5xx and 429; ``hint``
    is appended to a permanent error's text (what to check, say, after a 401).
    """
    reason = phrase(status)
    said = detail(message, secrets)
    text = f"{where}: {status} {reason}".rstrip()
    if said and said.lower() != reason.lower():
        text += f": {said}"
    if transient or status >= 500 or status == 429:
        return TransientForgeError(text, retry_after=retry_after)
    return ForgeStatusError(text + hint, status=status, message=said)
