"""What the reconciler and the redeliveries ask of GitHub beyond one repository's requests:
as the App itself (its JWT: its webhook's deliveries, its installations) or as one of its
installations (its token, replaced once when GitHub refuses it), a page at a time, each call
retried whole by the seam's policy (:meth:`bot.forges.http.seam.Seam.run`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from bot.errors import ForgeStatusError, PermanentForgeError
from bot.forges.buckets import APP_BUCKET, installation_bucket
from bot.forges.github.auth import InstallationTokens
from bot.forges.github.http import GitHubHTTP, Page
from bot.forges.http.seam import Seam

T = TypeVar("T")
JWT_REFUSED = (
    " (the app's JWT was refused: check ICHOR_GITHUB_APP_ID, ICHOR_GITHUB_PRIVATE_KEY and "
    "this machine's clock)"
)


class AppCalls:
    def __init__(self, http: GitHubHTTP, tokens: InstallationTokens, seam: Seam) -> None:
        self._http = http
        self._tokens = tokens
        self._seam = seam

    def as_app(self, url: str) -> Page:
        """A page the App reads as itself."""
        page: Page = self._seam.run(lambda: self._app(lambda jwt: self._page(url, jwt, APP_BUCKET)))
        return page

    def app_post(self, path: str) -> Any:
        """A POST without a body the App makes as itself."""

        def post(jwt: str) -> Any:
            return self._http.send("POST", path, jwt, b"", bucket=APP_BUCKET)

        return self._seam.run(lambda: self._app(post))

    def as_installation(self, installation_id: int, url: str, tag: str | None = None) -> Page:
        """A page read with the installation's token (a conditional request with ``tag``)."""
        bucket = installation_bucket(installation_id)

        def attempt() -> Page:
            token = self._tokens.get(installation_id)
            try:
                return self._page(url, token, bucket, tag)
            except ForgeStatusError as exc:
                if exc.status != 401:
                    raise
                # Revoked, or the installation's tokens were reset: one fresh token, one try.
                self._tokens.invalidate(installation_id, token)
                return self._page(url, self._tokens.get(installation_id), bucket, tag)

        return self._seam.run(attempt)

    def _page(self, url: str, bearer: str, bucket: str, tag: str | None = None) -> Page:
        return self._http.page(url, bearer, bucket=bucket, tag=tag)

    def _app(self, call: Callable[[str], T]) -> T:
        try:
            return call(self._tokens.signed_jwt())
        except ForgeStatusError as exc:
            if exc.status != 401:
                raise
            raise PermanentForgeError(f"{exc}{JWT_REFUSED}") from exc
