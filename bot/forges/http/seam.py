"""The request seam: the one place a request to a forge's API is sent, retried and its failure
mapped, for every forge.

An adapter builds a request (its forge's paths, headers and payloads) and reads the answer;
between the two, :meth:`Seam.send` applies what every forge shares:

- the client's timeouts, and no redirects (following one would send the credential wherever
  it points);
- a transport failure (timeouts included) becomes a :class:`bot.errors.TransientForgeError`;
- an error status, or a status ``http.HTTPStatus`` does not know (a proxy's 520), becomes a
  :class:`bot.errors.ForgeError` (:meth:`Seam.error`): 5xx and 429 transient, after the wait
  the server named in ``Retry-After`` or a rate limit's reset (read against the injected
  clock); any other status a :class:`bot.errors.ForgeStatusError` carrying it. The forge's
  :class:`Policy` adds only what is its own: where its message is, a hint after a refusal,
  and whether a 403 can mean "slow down" (GitHub's rate limits);
- every credential is cut from the error's text, in every form it can take, before anything
  shortens it;
- the rate limit each answer reports is kept per bucket (a token, an installation), its
  exhaustion logged (:meth:`Seam.rate`), and handed to the observer the adapter was given
  (the worker keeps it where the status page and the work that can wait read it);
- a status the caller expects (``expect``: a 304 to a conditional request) is an answer, not
  an error.

:meth:`Seam.run` is the retry policy (:func:`bot.forges.http.retry.with_retries`): applied
around a whole operation, not a single request, so a retry after a lost answer reads the
state again instead of writing twice. A wait longer than the policy's ``max_delay``
propagates with its ``retry_after``, so the job queue reschedules the job.

GitHub sends through here under gidgethub's sans-I/O core, Gitea directly, GitLab through
python-gitlab, whose requests session sends through here (:mod:`bot.forges.http.requests`).
"""

from __future__ import annotations

import json as jsonlib
import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from bot.errors import ForgeError, PermanentForgeError, TransientForgeError
from bot.forges.http.errors import detail, http_error, phrase
from bot.forges.http.redaction import redact
from bot.forges.http.retry import server_wait, with_retries

T = TypeVar("T")

TIMEOUT = httpx.Timeout(30.0, connect=10.0)
SECONDARY_LIMIT_WAIT = 60.0  # GitHub: without a Retry-After, wait at least a minute
_MAX_MESSAGE = 64 * 1024  # of an error body read for its message (then scrubbed, then cut)
# The rate-limit header triples forges send: GitHub's, and the IETF draft's GitLab uses.
_RATE_HEADERS = (
    ("x-ratelimit-remaining", "x-ratelimit-limit", "x-ratelimit-reset"),
    ("ratelimit-remaining", "ratelimit-limit", "ratelimit-reset"),
)


def new_client(timeout: float | httpx.Timeout = TIMEOUT) -> httpx.Client:
    """The HTTP client an adapter owns when it is handed none."""
    return httpx.Client(timeout=timeout, follow_redirects=False)


def json_message(response: httpx.Response) -> str:
    """The forge's ``message`` (GitLab's ``error`` too; Gitea's ``errors`` after it), else
    the start of a body that is not JSON."""
    try:
        body = response.json()
    except (jsonlib.JSONDecodeError, UnicodeDecodeError):
        return response.text[:_MAX_MESSAGE]
    if not isinstance(body, dict):
        return ""
    said = body.get("message", body.get("error"))
    message = said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said or "")
    errors = body.get("errors")
    if isinstance(errors, list) and errors:
        message = "; ".join([message, *map(str, errors)]).strip("; ")
    return message


def _no_hint(response: httpx.Response) -> str:
    return ""


@dataclass(frozen=True, slots=True)
class Policy:
    """What one forge's answers mean beyond what every forge shares, and how hard to retry."""

    forge: str  # "GitHub", "GitLab", "Gitea": starts every error's text
    message: Callable[[httpx.Response], str] = json_message  # the forge's own words
    hint: Callable[[httpx.Response], str] = _no_hint  # appended to a permanent error
    limits_with_403: bool = False  # GitHub: a 403 naming a wait, or a secondary limit
    attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 60.0


@dataclass(frozen=True, slots=True)
class RateLimit:
    """What the forge last said of a bucket's rate limit: requests left, of how many, and
    when (epoch seconds) the window resets."""

    remaining: int
    limit: int | None
    reset: float | None


# Told of every rate limit an answer reports: its bucket and the limit (never raises into
# the request: the seam swallows what it raises, see Seam._account).
RateObserver = Callable[[str, RateLimit], None]


class Seam:
    """Every request of one adapter; owns its client unless handed one."""

    def __init__(
        self,
        policy: Policy,
        client: httpx.Client | None = None,
        *,
        timeout: float | httpx.Timeout = TIMEOUT,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        observe: RateObserver | None = None,
    ) -> None:
        self.policy = policy
        self._observe = observe
        self._owns_client = client is None
        self._client = client if client is not None else new_client(timeout)
        self._clock = clock
        self._sleep = sleep
        self._rates: dict[str, RateLimit] = {}
        self._log = logging.getLogger(f"ichor.forge.{policy.forge.lower()}")

    @property
    def client(self) -> httpx.Client:
        return self._client

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def run(self, operation: Callable[[], T]) -> T:
        """``operation()``, retried whole on a transient failure, each retry logged."""
        policy = self.policy
        return with_retries(
            operation,
            attempts=policy.attempts,
            base_delay=policy.base_delay,
            max_delay=policy.max_delay,
            sleep=self._sleep,
            on_retry=self._log_retry,
        )

    def _log_retry(self, exc: TransientForgeError, delay: float) -> None:
        self._log.warning("%s; retrying in %.1fs", exc, delay)

    def send(
        self,
        method: str,
        url: str,
        *,
        where: str | None = None,
        secrets: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        json: Any = None,
        params: Mapping[str, str | int] | None = None,
        bucket: str = "",
        limit: int | None = None,
        expect: Collection[int] = (),
    ) -> httpx.Response:
        """One request; the response when it is a success (or a status in ``expect``, such
        as a 304 to a conditional request), else the forge's error, raised.
        ``where`` (``"Gitea GET /repos/o/r"``) starts every error's text: the forge, the
        method and the URL's path unless given. ``limit`` refuses an answer over that many
        bytes without reading the rest."""
        where = where or f"{self.policy.forge} {method} {urlsplit(url).path}"
        try:
            request = self._client.build_request(
                method,
                url,
                headers=dict(headers) if headers else None,
                content=content,
                json=json,
                params=dict(params) if params else None,
            )
            response = self._client.send(request, stream=True)
            try:
                _read(response, limit, where)
            finally:
                response.close()
        except httpx.TransportError as exc:
            text = f"{where}: {type(exc).__name__} {exc}".strip()
            raise redact(TransientForgeError(text), secrets) from exc
        self._account(bucket, response.headers)
        if response.status_code in expect:
            return response
        if response.status_code >= 300 or not phrase(response.status_code):
            raise redact(self.error(where, response, secrets), secrets) from None
        return response

    def error(self, where: str, response: httpx.Response, secrets: Sequence[str]) -> ForgeError:
        """The error an answer with an error status means (see the module doc)."""
        policy, status = self.policy, response.status_code
        message = policy.message(response)
        wait = server_wait(response.headers, self._clock())
        limited = False
        if policy.limits_with_403 and status == 403:
            if wait is None and "secondary rate limit" in detail(message, secrets).lower():
                wait = SECONDARY_LIMIT_WAIT
            limited = wait is not None
        hint = "" if limited else policy.hint(response)
        return http_error(
            where,
            status,
            message,
            secrets=secrets,
            retry_after=wait,
            transient=limited,
            hint=hint,
        )

    def rate(self, bucket: str = "") -> RateLimit | None:
        """The rate limit the forge last reported for ``bucket``, if it reported one."""
        return self._rates.get(bucket)

    def _account(self, bucket: str, headers: httpx.Headers) -> None:
        for remaining_key, limit_key, reset_key in _RATE_HEADERS:
            remaining = _number(headers.get(remaining_key))
            if remaining is None:
                continue
            limit, reset = _number(headers.get(limit_key)), _number(headers.get(reset_key))
            rate = RateLimit(int(remaining), None if limit is None else int(limit), reset)
            before = self._rates.get(bucket)
            self._rates[bucket] = rate
            if self._observe is not None:
                try:
                    self._observe(bucket, rate)
                except Exception:  # keeping the number must never fail the request
                    self._log.debug("the rate limit could not be kept", exc_info=True)
            if rate.remaining == 0 and (before is None or before.remaining > 0):
                wait = max(0.0, rate.reset - self._clock()) if rate.reset is not None else None
                shown = "unknown" if wait is None else f"{wait:.0f}s"
                self._log.info(
                    "%s rate limit spent%s; it resets in %s",
                    self.policy.forge,
                    f" ({bucket})" if bucket else "",
                    shown,
                )
            return


def _read(response: httpx.Response, limit: int | None, where: str) -> None:
    """The whole body into ``response``, refused past ``limit`` bytes."""
    if limit is None:
        response.read()
        return
    declared = _number(response.headers.get("content-length"))
    if declared is not None and declared > limit:
        raise PermanentForgeError(f"{where}: the answer is over {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise PermanentForgeError(f"{where}: the answer is over {limit} bytes")
        chunks.append(chunk)
    response._content = b"".join(chunks)


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
