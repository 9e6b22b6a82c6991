"""``GET /setup/github`` and its callback: register the GitHub App from a manifest.

The page posts the manifest to GitHub's app-creation page with a fresh ``state``; GitHub sends
the browser back to the callback with a code, which is exchanged (once, unauthenticated) for
the App's id, webhook secret and private key, shown on a page that is never cached. The
secrets are never logged. Only served when ``ICHOR_SETUP_ENABLED`` is true.

The exchange is the one forge call the web process makes: it is sent through the request seam
(:mod:`bot.forges.http`), synchronously, in a worker thread (``run_in_threadpool``), so the
event loop never waits on GitHub.

The App's URLs are built from ``ICHOR_PUBLIC_URL`` when it is set, else from the address the
page was opened at (shown on the page, so a wrong one is seen before anything is created).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from bot.errors import ForgeError, ForgeStatusError
from bot.forges.github.manifest import (
    MAX_CONVERSION_BYTES,
    AppCredentials,
    ManifestError,
    build_manifest,
    check_org,
    check_token,
    conversion_path,
    creation_url,
    parse_conversion,
    public_base,
)
from bot.forges.http.seam import Policy, Seam
from bot.settings import Settings
from bot.state.setup import RedisSetupStore, SetupStoreUnavailable
from bot.web.setup_pages import render_created, render_refused, render_start, security_headers
from bot.web.setup_states import SetupStates

log = logging.getLogger("ichor.web.setup")

PAGE = "/setup/github"
COOKIE = "ichor_setup_state"
_WHERE = "GitHub POST /app-manifests/{code}/conversions"  # never the code itself
_HEADERS = {
    "Accept": "application/vnd.github+json",
    "User-Agent": "ichor-bot",
    "X-GitHub-Api-Version": "2022-11-28",
}
# GitHub's: a 403 naming a wait is a rate limit. Unauthenticated, the exchange is sent once.
_POLICY = Policy("GitHub", limits_with_403=True, attempts=1)


def exchange_code(api_url: str, code: str, client: httpx.Client | None = None) -> AppCredentials:
    """The App GitHub created for ``code``: its one answer to the conversion. Synchronous,
    through the request seam as every forge call is; the callback runs it in a thread."""
    seam = Seam(_POLICY, client)
    try:
        response = seam.send(
            "POST",
            api_url.rstrip("/") + conversion_path(code),
            where=_WHERE,
            secrets=(code,),
            headers=_HEADERS,
            limit=MAX_CONVERSION_BYTES,
        )
    finally:
        seam.close()
    if response.status_code != 201:
        raise seam.error(_WHERE, response, (code,))
    return parse_conversion(response.content)


def setup_routes(
    settings: Settings,
    *,
    clock: Callable[[], float] | None = None,
) -> list[Route]:
    """The two routes, or none when setup is not enabled (so both answer 404). With Redis the
    flow's states are shared by every web replica (on the wall clock, which they share)."""
    if not settings.setup_enabled:
        return []
    store = RedisSetupStore(settings.redis_url, settings.queue_name) if settings.redis_url else None
    if clock is None:
        clock = time.time if store is not None else time.monotonic
    configured = public_base(settings.public_url) if settings.public_url else None
    web_url = public_base(settings.github_url, "ICHOR_GITHUB_URL")
    web = urlsplit(web_url)
    headers = security_headers(f"{web.scheme}://{web.netloc}")
    api_url = settings.github_api_url
    states = SetupStates(clock, store=store)

    def refused(status: int, message: str) -> Response:
        return HTMLResponse(render_refused(message), status_code=status, headers=headers)

    def bot_base(request: Request) -> tuple[str, str]:
        """Where the bot is, and how that was decided. The callback comes back to the address
        the manifest named, so it reads the same answer the page gave."""
        if configured is not None:
            return configured, "from ICHOR_PUBLIC_URL"
        base = public_base(str(request.base_url), "this page's address")
        return base, "this page's address; set ICHOR_PUBLIC_URL to choose another"

    async def start(request: Request) -> Response:
        org = request.query_params.get("org", "").strip() or None
        try:
            if org is not None:
                check_org(org)
            base, source = bot_base(request)
        except ManifestError as exc:
            return refused(400, str(exc))
        try:
            state = await run_in_threadpool(states.issue)  # Redis, when shared: off the loop
        except SetupStoreUnavailable as exc:
            log.warning("GitHub App setup: Redis is unreachable: %s", exc)
            return refused(503, "The setup keeps its state in Redis, which is unreachable now.")
        page = render_start(build_manifest(base), creation_url(web_url, state, org), org, source)
        response = HTMLResponse(page, headers=headers)
        # The browser's copy of the state: the callback must come back to the same browser.
        response.set_cookie(
            COOKIE,
            state,
            max_age=int(states.ttl),
            path=PAGE,
            secure=base.startswith("https:"),
            httponly=True,
            samesite="lax",
        )
        return response

    async def callback(request: Request) -> Response:
        try:
            state = check_token(request.query_params.get("state", ""), "state")
            code = check_token(request.query_params.get("code", ""), "code")
            base, _ = bot_base(request)
        except ManifestError as exc:
            return refused(400, f"GitHub's answer cannot be used: {exc}.")
        try:
            pending = await run_in_threadpool(states.consume, state, request.cookies.get(COOKIE))
        except SetupStoreUnavailable as exc:
            log.warning("GitHub App setup: Redis is unreachable: %s", exc)
            return refused(503, "The setup keeps its state in Redis, which is unreachable now.")
        if pending is None:
            return refused(
                400,
                "This setup link is unknown, expired or already used, or was opened in "
                "another browser than the one that started it.",
            )
        try:
            app = await run_in_threadpool(exchange_code, api_url, code)
        except ForgeStatusError as exc:
            log.warning("GitHub App setup: the code exchange was refused: %s", exc)
            if exc.status == 404:
                return refused(
                    400,
                    "GitHub does not know this code: it works once, within an hour of "
                    "creating the App.",
                )
            return refused(502, f"GitHub refused the code exchange: {exc}")
        except (ForgeError, ManifestError) as exc:
            log.warning("GitHub App setup: the code exchange failed: %s", exc)
            return refused(502, f"The code exchange with GitHub failed: {exc}")
        log.info("GitHub App %s (id %d) created from the manifest", app.slug, app.app_id)
        response = HTMLResponse(render_created(app, base), headers=headers)
        response.delete_cookie(COOKIE, path=PAGE)
        return response

    return [
        Route(PAGE, start, methods=["GET"]),
        Route(PAGE + "/callback", callback, methods=["GET"]),
    ]
