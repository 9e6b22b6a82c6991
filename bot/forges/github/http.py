"""GitHub's requests: gidgethub's sans-I/O core builds the headers and URLs and reads the
answers (every page of a listing, with ``pages``); the request seam (:mod:`bot.forges.http`)
sends them, retries and maps their failures under :data:`POLICY`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import gidgethub
import httpx
from gidgethub import sansio

from bot.errors import TransientForgeError
from bot.forges.http.errors import phrase
from bot.forges.http.redaction import secrets_list, token_forms
from bot.forges.http.seam import Policy, Seam


def _message(response: httpx.Response) -> str:
    """gidgethub's reading of GitHub's message; none for a status http.HTTPStatus does not
    know."""
    if phrase(response.status_code):
        try:
            sansio.decipher_response(response.status_code, response.headers, response.content)
        except gidgethub.HTTPException as exc:
            return str(exc)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return ""
    return ""


# GitHub answers an exhausted rate limit with a 403 that names a wait, and a secondary one
# (abuse detection) with a 403 that may name none.
POLICY = Policy("GitHub", message=_message, limits_with_403=True)


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a listing: its data (None when ``unchanged``), its ETag, the next page's
    URL. ``unchanged``: a conditional request answered 304, which GitHub does not count
    against the rate limit."""

    data: Any
    tag: str | None
    next_url: str | None
    unchanged: bool = False


class GitHubHTTP:
    """Requests to the API at ``api_url`` with ``Authorization: Bearer <bearer>``."""

    def __init__(self, seam: Seam, *, api_url: str, requester: str) -> None:
        self._seam = seam
        self._base_url = api_url
        self._requester = requester

    def send(
        self,
        method: str,
        path: str,
        bearer: str,
        data: Any = None,
        *,
        pages: bool = False,
        bucket: str = "",
    ) -> Any:
        """One request (every page of a listing, with ``pages``); failures become ForgeErrors
        naming ``path``, the listing's first page for every page of it."""
        secrets = secrets_list(token_forms(bearer))
        try:
            if not pages:
                return self._request(method, path, bearer, data, secrets, path, bucket)[0]
            items: list[Any] = []
            # GitHub's largest page, unless the caller asked for another size.
            url: str | None = (
                path if "per_page=" in path else f"{path}{'&' if '?' in path else '?'}per_page=100"
            )
            while url is not None:
                listed, url = self._request("GET", url, bearer, b"", secrets, path, bucket)
                if isinstance(listed, dict) and "items" in listed:  # as gidgethub's getiter
                    listed = listed["items"]
                items.extend(listed)
            return items
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise TransientForgeError(f"GitHub {method} {path}: unreadable response") from exc

    def page(self, url: str, bearer: str, *, bucket: str, tag: str | None = None) -> Page:
        """One page of a listing (``url`` a path, or the next page's URL); with ``tag`` (the
        ETag an earlier answer carried), a conditional request."""
        where = f"GitHub GET {urlsplit(url).path}"
        headers = sansio.create_headers(self._requester, accept=sansio.accept_format())
        headers["authorization"] = f"Bearer {bearer}"
        headers["content-length"] = "0"
        if tag:
            headers["if-none-match"] = tag
        response = self._seam.send(
            "GET",
            sansio.format_url(url, None, base_url=self._base_url),
            where=where,
            secrets=secrets_list(token_forms(bearer)),
            headers=headers,
            content=b"",
            bucket=bucket,
            expect=(304,),
        )
        etag = response.headers.get("etag")
        if response.status_code == 304:
            return Page(None, etag or tag, None, unchanged=True)
        try:
            data, _, more = sansio.decipher_response(
                response.status_code, response.headers, response.content
            )
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise TransientForgeError(f"{where}: unreadable response") from exc
        return Page(data, etag, more)

    def _request(
        self,
        method: str,
        url: str,
        bearer: str,
        data: Any,
        secrets: Sequence[str],
        path: str,
        bucket: str,
    ) -> tuple[Any, str | None]:
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
        response = self._seam.send(
            method,
            sansio.format_url(url, None, base_url=self._base_url),
            where=f"GitHub {method} {path}",
            secrets=secrets,
            headers=headers,
            content=body,
            bucket=bucket,
        )
        answer, _, more = sansio.decipher_response(
            response.status_code, response.headers, response.content
        )
        return answer, more
