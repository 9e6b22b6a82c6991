"""HTTP plumbing of the GitHub adapter: one request through gidgethub's sans-I/O core (every
page of a listing, with ``pages``) and its failure as a :class:`bot.errors.ForgeError`.

gidgethub builds requests and reads responses; a synchronous httpx client carries them. An
error's text names the method, path and status with GitHub's own message, and never a
credential: the bearer, in every form it can take, is cut from it before it is shortened.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import gidgethub
import httpx
from gidgethub import sansio

from bot.errors import ForgeError, TransientForgeError
from bot.forges.github.payloads import http_error
from bot.forges.http_errors import phrase
from bot.forges.redaction import secrets_list, token_forms
from bot.forges.seam import Seam


class GitHubHTTP:
    """Requests to the API at ``api_url`` with ``Authorization: Bearer <bearer>``: gidgethub's
    sans-I/O core builds the headers and URLs and reads the answers; the request seam
    (:mod:`bot.forges.seam`) sends them and maps their failures."""

    def __init__(
        self,
        client: httpx.Client,
        *,
        api_url: str,
        requester: str,
        clock: Callable[[], float],
    ) -> None:
        self._seam = Seam(client, _error, clock=clock)
        self._base_url = api_url
        self._requester = requester

    def send(
        self, method: str, path: str, bearer: str, data: Any = None, *, pages: bool = False
    ) -> Any:
        """One request (every page of a listing, with ``pages``); failures become ForgeErrors."""
        secrets = secrets_list(token_forms(bearer))
        try:
            if not pages:
                return self._request(method, path, bearer, data, secrets, path)[0]
            items: list[Any] = []
            url: str | None = path
            while url is not None:
                listed, url = self._request("GET", url, bearer, b"", secrets, path)
                if isinstance(listed, dict) and "items" in listed:  # as gidgethub's getiter
                    listed = listed["items"]
                items.extend(listed)
            return items
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise TransientForgeError(f"GitHub {method} {path}: unreadable response") from exc

    def _request(
        self, method: str, url: str, bearer: str, data: Any, secrets: Sequence[str], path: str
    ) -> tuple[Any, str | None]:
        """One exchange: the answer's data and the next page's URL, if any. Errors name
        ``path``, the listing's first page for every page of it."""
        headers = sansio.create_headers(self._requester, accept=sansio.accept_format())
        headers["authorization"] = f"Bearer {bearer}"
        body = b""
        if method == "GET" or data == b"":
            headers["content-length"] = "0"
        else:
            body = json.dumps(data).encode("utf-8")
            headers["content-type"] = "application/json; charset=utf-8"
            headers["content-length"] = str(len(body))
        response = self._seam.send(
            method,
            sansio.format_url(url, None, base_url=self._base_url),
            where=f"GitHub {method} {path}",
            secrets=secrets,
            headers=headers,
            content=body,
        )
        answer, _, more = sansio.decipher_response(
            response.status_code, response.headers, response.content
        )
        return answer, more


def _error(where: str, response: httpx.Response, secrets: Sequence[str], now: float) -> ForgeError:
    """GitHub's error for an answer: gidgethub's reading of its message (none for a status
    http.HTTPStatus does not know), and GitHub's rate limits."""
    message = ""
    if phrase(response.status_code):
        try:
            sansio.decipher_response(response.status_code, response.headers, response.content)
        except gidgethub.HTTPException as exc:
            message = str(exc)
        except (json.JSONDecodeError, UnicodeDecodeError):
            message = ""
    # The secrets go in so they are cut before the message is shortened.
    return http_error(
        where, response.status_code, response.headers, message, now=now, secrets=secrets
    )
