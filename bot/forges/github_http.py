"""HTTP plumbing of the GitHub adapter: one request through gidgethub's sans-I/O core (every
page of a listing, with ``pages``) and its failure as a :class:`bot.errors.ForgeError`.

gidgethub builds requests and reads responses; a synchronous httpx client carries them. An
error's text names the method, path and status with GitHub's own message, and never a
credential: the bearer, in every form it can take, is cut from it before it is shortened.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import gidgethub
import httpx
from gidgethub import sansio

from bot.errors import TransientForgeError
from bot.forges.github_payloads import http_error
from bot.forges.http_errors import phrase
from bot.forges.redaction import redact, secrets_list, token_forms


class _OddStatus(Exception):
    """A status http.HTTPStatus does not know (args: status, headers)."""


class GitHubHTTP:
    """Requests to the API at ``api_url`` with ``Authorization: Bearer <bearer>``: gidgethub's
    sans-I/O core builds the headers and URLs and reads the answers, ``client`` sends them."""

    def __init__(
        self,
        client: httpx.Client,
        *,
        api_url: str,
        requester: str,
        clock: Callable[[], float],
    ) -> None:
        self._client = client
        self._base_url = api_url
        self._requester = requester
        self._clock = clock  # reads a rate limit's reset time against now

    def send(
        self, method: str, path: str, bearer: str, data: Any = None, *, pages: bool = False
    ) -> Any:
        """One request (every page of a listing, with ``pages``); failures become ForgeErrors."""
        secrets = secrets_list(token_forms(bearer))
        try:
            if not pages:
                return self._request(method, path, bearer, data)[0]
            items: list[Any] = []
            url: str | None = path
            while url is not None:
                listed, url = self._request("GET", url, bearer, b"")
                if isinstance(listed, dict) and "items" in listed:  # as gidgethub's getiter
                    listed = listed["items"]
                items.extend(listed)
            return items
        except gidgethub.HTTPException as exc:
            message = str(exc)
            status, reply = int(exc.status_code), exc.headers
            cause: Exception = exc
        except _OddStatus as exc:
            (status, reply), message, cause = exc.args, "", exc
        except httpx.TransportError as exc:  # timeouts included
            text = f"GitHub {method} {path}: {type(exc).__name__} {exc}".strip()
            raise redact(TransientForgeError(text), secrets) from exc
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise TransientForgeError(f"GitHub {method} {path}: unreadable response") from exc
        where = f"GitHub {method} {path}"
        # The secrets go in so they are cut before the message is shortened.
        error = http_error(where, status, reply, message, now=self._clock(), secrets=secrets)
        raise redact(error, secrets) from cause

    def _request(self, method: str, url: str, bearer: str, data: Any) -> tuple[Any, str | None]:
        """One exchange: the answer's data and the next page's URL, if any."""
        headers = sansio.create_headers(self._requester, accept=sansio.accept_format())
        headers["authorization"] = f"Bearer {bearer}"
        body = b""
        if method == "GET" or data == b"":
            headers["content-length"] = "0"
        else:
            body = json.dumps(data).encode("utf-8")
            headers["content-type"] = "application/json; charset=utf-8"
            headers["content-length"] = str(len(body))
        full = sansio.format_url(url, None, base_url=self._base_url)
        response = self._client.request(method, full, headers=headers, content=body)
        # gidgethub builds http.HTTPStatus(status), a ValueError for a proxy's 520 or 599.
        if not phrase(response.status_code):
            raise _OddStatus(response.status_code, response.headers)
        answer, _, more = sansio.decipher_response(
            response.status_code, response.headers, response.content
        )
        return answer, more
