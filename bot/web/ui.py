"""The status page: server-rendered HTML from the history store and the queue.

Every route of the page is in :func:`ui_routes`, so whatever guards the page (basic auth)
guards all of it. Templates autoescape everything; forge and pull request data never reach
the page as markup, links are built only from http(s) repository URLs, and every response
carries a Content-Security-Policy that allows no script at all and styles from this app only.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from bot.queueing.base import DeliveryQueue
from bot.state.audit import escape_text
from bot.state.base import AuditLog, AuditRecord
from bot.state.history import CHECK_CAP, DELIVERY_CAP, CheckEntry, DeliveryEntry, HistoryStore
from bot.state.outcomes import JobOutcome, OutcomeStore
from bot.state.rates import RateBudget, RateStore
from bot.state.sweeps import RepoReconciled, SweepRun, SweepStore
from bot.web import links, markdown
from bot.web.check_view import TARGET_VERDICTS, CheckView, check_view, forge_of_pages, verdict
from bot.web.command_rows import OVERVIEW_COMMANDS, PAGE_COMMANDS, command_rows
from bot.web.delivery_log import DeliveryLog
from bot.web.offloop import OffLoop
from bot.web.repo_view import (
    CONCLUSIONS,
    FORGES,
    Filters,
    change_pulls,
    page_query,
    repository_query,
    repository_view,
)

log = logging.getLogger("ichor.web")

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
STATIC_FILES = {"status.css": "text/css", "favicon.svg": "image/svg+xml"}
JOB_STATES = ("queued", "started", "finished", "failed", "scheduled")
_LATEST_JOBS = 10
_RECENT_OUTCOMES = 50  # the jobs whose unposted results the page sums up at the top
_SHOWN_DELIVERIES = 50
_SHOWN_CHECKS = 50
_SHOWN_REPOSITORIES = 50
_CHECK_ID = re.compile(r"[0-9a-f]{24}")
_SHOWN_CHANGE_PULLS = 10


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("bot.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["utc"] = lambda at: time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at))
    env.filters["short"] = lambda sha: sha[:12]
    env.filters["visible"] = escape_text  # control characters and bidi overrides as escapes
    env.filters["repository_query"] = repository_query
    env.globals["verdict"] = verdict
    env.globals["target_glyph"] = lambda word: TARGET_VERDICTS.get(word, "")
    return env


def pull_url(entry: CheckEntry) -> str | None:
    return links.pull_url(forge_of_pages(entry), entry.web_url, entry.number)


def commit_url(entry: CheckEntry) -> str | None:
    return links.commit_url(forge_of_pages(entry), entry.web_url, entry.head_sha)


@dataclass
class Snapshot:
    """What one page view read, or what it could: a store that is down shows as a note."""

    deliveries: list[DeliveryEntry] = field(default_factory=list)
    checks: list[CheckEntry] = field(default_factory=list)
    states: dict[str, int] = field(default_factory=dict)
    jobs: list[tuple[str, str]] = field(default_factory=list)  # (job id, state)
    outcomes: dict[str, JobOutcome] = field(default_factory=dict)  # by job id
    unposted: list[str] = field(default_factory=list)  # recent jobs' results not posted
    forges: list[str] = field(default_factory=list)  # half-configured forges
    commands: list[AuditRecord] = field(default_factory=list)  # newest first, up to 200
    rates: list[tuple[RateBudget, bool]] = field(default_factory=list)  # (budget, low now)
    sweeps: list[SweepRun] = field(default_factory=list)
    reconciled: list[RepoReconciled] = field(default_factory=list)
    depth: int = -1
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Outcomes:
    """Where the page reads how jobs ended, and which forges are half-configured."""

    store: OutcomeStore
    forge_problems: Callable[[], list[str]]


@dataclass(frozen=True, slots=True)
class Upkeep:
    """Where the page reads the rate budget and what the sweeps found (design.md 7), and the
    settings it names: the reserve work that can wait keeps, and the sweep's interval."""

    rates: RateStore
    sweeps: SweepStore
    reserve: float
    interval: float
    clock: Callable[[], float] = time.time


def unposted_lines(outcomes: list[JobOutcome]) -> list[str]:
    """Recent jobs that ended for good without posting, one line per forge and reason (the
    newest reason shown): what the top of the page says, so a forge that cannot be reached
    is seen before any table."""
    groups: dict[tuple[str, str], list[JobOutcome]] = {}
    for outcome in outcomes:  # newest first
        if outcome.counted:
            groups.setdefault((outcome.forge, outcome.kind), []).append(outcome)
    lines = []
    for (forge, _), group in groups.items():
        jobs = "1 recent job" if len(group) == 1 else f"{len(group)} recent jobs"
        whose = "its" if len(group) == 1 else "their"
        latest = group[0]
        lines.append(
            f"{forge}: {jobs} ended without posting {whose} result: {latest.said} "
            f"(latest: {latest.detail})"
        )
    return lines


def _read(
    store: HistoryStore,
    queue: DeliveryQueue,
    audit: AuditLog,
    outcomes: Outcomes,
    upkeep: Upkeep,
) -> Snapshot:
    """Blocking reads for the overview (run on a thread): each part may fail on its own."""
    found = Snapshot()
    try:
        # All that is kept: the filters choose among them, the durations need the deliveries.
        found.deliveries = store.deliveries(DELIVERY_CAP)
        found.checks = store.checks(CHECK_CAP)
    except Exception as exc:
        found.problems.append(f"history unavailable: {type(exc).__name__}")
    try:
        found.depth = queue.depth()
        found.states = queue.states()
        job_ids = list(dict.fromkeys(d.job_id for d in found.deliveries if d.job_id))
        for job_id in job_ids[:_LATEST_JOBS]:
            found.jobs.append((job_id, queue.job_state(job_id) or "gone"))
    except Exception as exc:
        found.problems.append(f"queue unavailable: {type(exc).__name__}")
    try:
        recent = outcomes.store.recent(_RECENT_OUTCOMES)
        found.unposted = unposted_lines(recent)
        found.outcomes = outcomes.store.outcomes([job_id for job_id, _ in found.jobs])
        found.forges = outcomes.forge_problems()
    except Exception as exc:
        found.problems.append(f"job outcomes unavailable: {type(exc).__name__}")
    try:
        found.commands = audit.recent(limit=PAGE_COMMANDS)
    except Exception as exc:
        found.problems.append(f"audit records unavailable: {type(exc).__name__}")
    try:
        now = upkeep.clock()
        found.rates = [(b, b.low(upkeep.reserve, now)) for b in upkeep.rates.budgets()]
        found.sweeps = upkeep.sweeps.runs()
        found.reconciled = upkeep.sweeps.repos(_SHOWN_REPOSITORIES)
    except Exception as exc:
        found.problems.append(f"rate limits and sweeps unavailable: {type(exc).__name__}")
    return found


def ui_routes(
    store: HistoryStore,
    queue: DeliveryQueue,
    deliveries: DeliveryLog,
    *,
    queue_kind: str,
    looks: OffLoop,
    audit: AuditLog,
    forge_urls: Mapping[str, str],
    outcomes: Outcomes,
    upkeep: Upkeep,
    refresh: int = 0,
) -> list[BaseRoute]:
    """The page's routes: ``/``, ``/repository``, ``/checks/<id>``, ``/commands``,
    ``/static/<file>`` (and an empty icon). ``forge_urls`` are the forges' web bases, for
    links to pull requests; ``refresh``: seconds between reloads of the overview and the
    repository pages (0: never; ``?refresh=0`` turns it off for one view)."""
    env = _environment()
    static = {
        name: (resources.files("bot.web").joinpath("static", name).read_bytes(), media_type)
        for name, media_type in STATIC_FILES.items()
    }

    async def off_loop(read: Callable[[], Any], default: Any) -> Any:
        # Bounded like every other look-up of the web process: a hung Redis costs at most
        # OffLoop's few threads, and the page answers in its timeout with what it has.
        return await looks.call(read, default)

    def page(template: str, status: int = 200, **context: Any) -> Response:
        html = env.get_template(template).render(queue_kind=queue_kind, **context)
        return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)

    def reloading(request: Request, path: str) -> dict[str, Any]:
        """The light auto-refresh: a ``<meta http-equiv="refresh">`` (no script), and the link
        that turns it off or back on, keeping the page's filters."""
        params = dict(request.query_params)
        on = refresh > 0 and params.get("refresh") != "0"
        toggle = path + page_query(params, refresh="0" if on else None)
        return {
            "refresh": refresh if on else 0,
            "refresh_toggle": toggle,
            "can_refresh": refresh > 0,
        }

    async def overview(request: Request) -> Response:
        await deliveries.flush(wait=False)  # what was just answered shows at once
        slow = Snapshot(problems=["history and queue did not answer in time"])
        found: Snapshot = await off_loop(lambda: _read(store, queue, audit, outcomes, upkeep), slow)
        states = {s: found.states.get(s, 0) for s in JOB_STATES}
        filters = Filters.from_query(request.query_params)
        checks = [check_view(c, found.deliveries) for c in found.checks if filters.check(c)]
        shown_deliveries = [d for d in found.deliveries if filters.delivery(d)]
        commands = command_rows(found.commands[:OVERVIEW_COMMANDS], forge_urls)
        return page(
            "index.html",
            found=found,
            states=states,
            checks=checks[:_SHOWN_CHECKS],
            checks_matched=len(checks),
            deliveries=shown_deliveries[:_SHOWN_DELIVERIES],
            filters=filters,
            forges=FORGES,
            conclusions=CONCLUSIONS,
            repositories=sorted({c.repository for c in found.checks}),
            commands=commands,
            commands_shown=OVERVIEW_COMMANDS,
            change_pulls=change_pulls(found.commands, forge_urls)[:_SHOWN_CHANGE_PULLS],
            reserve=f"{upkeep.reserve:.0%}",
            interval=upkeep.interval,
            **reloading(request, "/"),
        )

    async def repository_page(request: Request) -> Response:
        await deliveries.flush(wait=False)
        filters = Filters.from_query(request.query_params)
        if filters.forge is None or filters.repo is None:
            return page("missing.html", status=404, what="repository")
        forge, repo = filters.forge, filters.repo

        def read() -> tuple[list[CheckEntry], list[DeliveryEntry], list[AuditRecord], list[str]]:
            problems: list[str] = []
            checks: list[CheckEntry] = []
            kept: list[DeliveryEntry] = []
            records: list[AuditRecord] = []
            try:
                checks, kept = store.checks(CHECK_CAP), store.deliveries(DELIVERY_CAP)
            except Exception as exc:
                problems.append(f"history unavailable: {type(exc).__name__}")
            try:
                records = audit.recent(repo=repo, limit=PAGE_COMMANDS)
            except Exception as exc:
                problems.append(f"audit records unavailable: {type(exc).__name__}")
            return checks, kept, records, problems

        slow: tuple[list[CheckEntry], list[DeliveryEntry], list[AuditRecord], list[str]] = (
            [],
            [],
            [],
            ["history did not answer in time"],
        )
        checks, kept, records, problems = await off_loop(read, slow)
        view = repository_view(forge, repo, checks, kept, records, forge_urls)
        return page(
            "repository.html",
            view=view,
            problems=problems,
            commands_query=repository_query(forge, repo),
            **reloading(request, "/repository"),
        )

    async def commands_page(request: Request) -> Response:
        repo = request.query_params.get("repo", "").strip() or None

        def read() -> tuple[list[AuditRecord], list[str]]:
            try:
                return audit.recent(repo=repo, limit=PAGE_COMMANDS), []
            except Exception as exc:
                return [], [f"audit records unavailable: {type(exc).__name__}"]

        slow: tuple[list[AuditRecord], list[str]] = ([], ["audit records did not answer in time"])
        records, problems = await off_loop(read, slow)
        return page(
            "commands.html",
            rows=command_rows(records, forge_urls),
            repo=repo,
            limit=PAGE_COMMANDS,
            problems=problems,
        )

    async def check_page(request: Request) -> Response:
        check_id = request.path_params["check_id"]
        entry = None
        if _CHECK_ID.fullmatch(check_id):
            entry = await off_loop(lambda: store.check(check_id), None)
        if entry is None:
            return page("missing.html", status=404, what="check")
        kept: list[DeliveryEntry] = await off_loop(lambda: store.deliveries(DELIVERY_CAP), [])
        view: CheckView = check_view(entry, kept, findings=True)
        return page(
            "check.html",
            check=entry,
            view=view,
            summary=markdown.render(entry.summary),
        )

    async def static_file(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in static:
            return Response(b"not found\n", 404, headers=SECURITY_HEADERS)
        content, media_type = static[name]
        headers = {**SECURITY_HEADERS, "Cache-Control": "max-age=300"}
        return Response(content, media_type=media_type, headers=headers)

    return [
        Route("/", overview),
        Route("/repository", repository_page),
        Route("/checks/{check_id}", check_page),
        Route("/commands", commands_page),
        Route("/static/{name}", static_file),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
    ]
