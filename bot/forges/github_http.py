"""HTTP plumbing of the GitHub adapter: one request through gidgethub (every page of a listing,
with ``pages``) and its failure as a :class:`bot.errors.ForgeError`.

gidgethub builds requests and reads responses; httpx carries them. An error's text names the
method, path and status with GitHub's own message, and never a credential: the bearer, in every
form it can take, is cut from it before it is shortened.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import gidgethub
import gidgethub.httpx
import httpx

from bot.errors import TransientForgeError
from bot.forges.github_payloads import http_error
from bot.forges.http_errors import phrase
from bot.forges.redaction import redact, secrets_list, token_forms


class _OddStatus(Exception):
    """A status http.HTTPStatus does not know (args: status, headers)."""


class _GitHubAPI(gidgethub.httpx.GitHubAPI):
    async def _request(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes = b""
    ) -> tuple[int, Mapping[str, str], bytes]:
        status, response_headers, content = await super()._request(method, url, headers, body)
        # gidgethub builds http.HTTPStatus(status), a ValueError for a proxy's 520 or 599.
        if not phrase(status):
            raise _OddStatus(status, response_headers)
        return status, response_headers, content


class GitHubHTTP:
    """Requests to the API at ``api_url`` with ``Authorization: Bearer <bearer>``."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        api_url: str,
        requester: str,
        clock: Callable[[], float],
    ) -> None:
        self._gh = _GitHubAPI(client, requester, base_url=api_url)
        self._clock = clock  # reads a rate limit's reset time against now

    async def send(
        self, method: str, path: str, bearer: str, data: Any = None, *, pages: bool = False
    ) -> Any:
        """One request (every page of a listing, with ``pages``); failures become ForgeErrors."""
        headers = {"authorization": f"Bearer {bearer}"}
        secrets = secrets_list(token_forms(bearer))
        try:
            if pages:
                return [item async for item in self._gh.getiter(path, None, extra_headers=headers)]
            if method == "GET":
                return await self._gh.getitem(path, None, extra_headers=headers)
            write = self._gh.post if method == "POST" else self._gh.patch
            return await write(path, None, data=data, extra_headers=headers)
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
