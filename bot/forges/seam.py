"""The request seam: the one place a request to a forge's API is sent and its failure mapped.

An adapter builds the request (its forge's paths, headers and payloads) and reads the answer;
between the two, :meth:`Seam.send` applies what every forge shares:

- the client's timeouts, and no redirects (following one would send the credential wherever
  it points);
- a transport failure (timeouts included) becomes a :class:`bot.errors.TransientForgeError`;
- an error status, or a status ``http.HTTPStatus`` does not know (a proxy's 520), becomes the
  forge's :class:`bot.errors.ForgeError`, built by the adapter's ``error`` function from the
  response (its message, and the wait the server named in ``Retry-After`` or a rate limit's
  reset, read against the injected clock);
- every credential is cut from the error's text, in every form it can take, before anything
  shortens it.

Retrying is not done here but around a whole operation (:func:`bot.forges.retry.with_retries`),
so a retry after a lost answer reads the state again instead of writing twice. GitLab goes
through python-gitlab's own session, with its retries off; its errors are mapped by the same
:func:`bot.forges.http_errors.http_error` and retried by the same policy.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx

from bot.errors import ForgeError, TransientForgeError
from bot.forges.http_errors import phrase
from bot.forges.redaction import redact

TIMEOUT = httpx.Timeout(30.0, connect=10.0)
# The forge's error for an answer: (where, response, credentials, now) -> the error.
ErrorOf = Callable[[str, httpx.Response, Sequence[str], float], ForgeError]


def new_client() -> httpx.Client:
    """The HTTP client an adapter owns when it is handed none."""
    return httpx.Client(timeout=TIMEOUT, follow_redirects=False)


class Seam:
    def __init__(
        self, client: httpx.Client, error: ErrorOf, *, clock: Callable[[], float] = time.time
    ) -> None:
        self._client = client
        self._error = error
        self._clock = clock

    def send(
        self,
        method: str,
        url: str,
        *,
        where: str,
        secrets: Sequence[str],
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        json: Any = None,
        params: Mapping[str, str | int] | None = None,
    ) -> httpx.Response:
        """One request; the response when it is a success, else the forge's error, raised.
        ``where`` (``"Gitea GET /repos/o/r"``) starts every error's text."""
        try:
            response = self._client.request(
                method,
                url,
                headers=dict(headers) if headers else None,
                content=content,
                json=json,
                params=dict(params) if params else None,
            )
        except httpx.TransportError as exc:
            text = f"{where}: {type(exc).__name__} {exc}".strip()
            raise redact(TransientForgeError(text), secrets) from exc
        if response.status_code >= 300 or not phrase(response.status_code):
            error = self._error(where, response, secrets, self._clock())
            raise redact(error, secrets) from None
        return response
