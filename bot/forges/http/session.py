"""A requests session that sends every request through a :class:`bot.forges.http.seam.Seam`.

For a client library built on requests (python-gitlab): it keeps building URLs, paging and
reading objects, and its requests get the seam's timeouts, error mapping, rate accounting and
token scrubbing like every other forge's. A failure leaves the seam as a ForgeError before
the library sees a status, so the library's own retries (which would sleep unlogged, outside
the retry policy) never start, and no redirect is followed.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import requests
import requests.adapters
from requests.structures import CaseInsensitiveDict

from bot.errors import PermanentForgeError
from bot.forges.http.redaction import redact
from bot.forges.http.seam import Seam


class _Through(requests.adapters.BaseAdapter):
    def __init__(self, seam: Seam, secrets: Sequence[str], last: threading.local) -> None:
        super().__init__()
        self._seam = seam
        self._secrets = secrets
        self._last = last

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: float | tuple[float | None, float | None] | None = None,
        verify: bool | str = True,
        cert: bytes | str | tuple[bytes | str, bytes | str] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        # The seam's client decides timeouts, certificates and proxies, as for every forge.
        method, url = str(request.method), str(request.url)
        self._last.request = (method, url)
        body: Any = request.body
        if isinstance(body, str):
            body = body.encode("utf-8")
        elif body is not None and not isinstance(body, bytes):
            body = b"".join(body)  # an iterable of bytes (a multipart upload)
        # httpx asks for the encodings it can decode itself, and the seam's client its own
        # connection handling: requests' values for those two are not passed on.
        headers = {
            k: v if isinstance(v, str) else v.decode("latin-1")
            for k, v in request.headers.items()
            if k.lower() not in ("accept-encoding", "connection")
        }
        answer = self._seam.send(method, url, secrets=self._secrets, headers=headers, content=body)
        response = requests.Response()
        response.status_code = answer.status_code
        response.reason = answer.reason_phrase
        response.headers = CaseInsensitiveDict(answer.headers.items())
        response._content = answer.content
        response.encoding = answer.encoding
        response.url = url
        response.request = request
        return response

    def close(self) -> None:
        """The seam's client is closed with the seam."""


class SeamSession(requests.Session):
    """A session whose only transport is ``seam``; ``secrets`` are cut from its errors."""

    def __init__(self, seam: Seam, secrets: Sequence[str]) -> None:
        super().__init__()
        self.trust_env = False  # the seam's client reads the environment (proxies) itself
        self._last = threading.local()
        self._forge, self._secrets = seam.policy.forge, secrets
        through = _Through(seam, secrets, self._last)
        self.mount("http://", through)
        self.mount("https://", through)

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        try:
            return super().request(method, url, *args, **kwargs)
        except requests.RequestException as exc:  # refused before sending: a bad URL
            path = urlsplit(str(url)).path
            error = PermanentForgeError(f"{self._forge} {method} {path}: {type(exc).__name__}")
            raise redact(error, self._secrets) from None

    def last_request(self) -> tuple[str, str] | None:
        """This thread's last request: its method and URL."""
        last: tuple[str, str] | None = getattr(self._last, "request", None)
        return last
