"""Onboarding triggers (design.md 6.6): a GitHub App installed on repositories, a push to the
default branch of a repository without ``.ichor.yaml`` (on every forge), and
``ichor-bot onboard``. Each runs :func:`bot.changes.onboard.open_onboarding`. A push to
``ichor/bootstrap`` of such a repository writes the onboarding pull request's description again
(:func:`bot.changes.onboard_rerender.rerender_onboarding`)."""

from __future__ import annotations

import logging
from typing import Any

from bot.changes.engine import ChangeServices
from bot.changes.onboard import OnboardingOutcome, open_onboarding
from bot.changes.onboard_rerender import rerender_onboarding
from bot.errors import ForgeError, PermanentForgeError
from bot.forges.base import RepositoryLookup
from bot.onboarding.proposal_body import BRANCH
from bot.repos import ForgeKind, RepoRef
from bot.state.audit import AuditTrail, utc_now
from bot.state.outcomes import Unposted
from bot.webhooks import InstallationEvent, PushEvent, RepositoryAddedEvent
from workers.changes import bot_identity
from workers.context import Adapter, WorkerContext
from workers.outcomes import not_posted

log = logging.getLogger("ichor.onboarding")
Summary = dict[str, Any]
INSTALLED_ACTIONS = ("created", "added")


def onboard(
    context: WorkerContext, adapter: Adapter, forge: str, repo: RepoRef, *, requested: bool = False
) -> OnboardingOutcome | None:
    """None where the bot cannot push (the local forge)."""
    if adapter.open_mirror is None:
        return None
    login = adapter.forge.bot_login(repo)
    services = ChangeServices(
        adapter.forge,
        adapter.open_mirror,
        context.state.locks,
        bot_identity(login, repo),
        cache=context.cache,
        registries=context.registries,
    )
    return open_onboarding(
        repo, services, forge_kind=forge, memory=context.state.onboarding, requested=requested
    )


def onboard_unconfigured_push(
    context: WorkerContext, adapter: Adapter, forge: str, event: PushEvent, repo: RepoRef
) -> Summary:
    """After a push found no ``.ichor.yaml`` on the default branch: onboard when it went to the
    default branch, describe the proposal afresh when it went to ``ichor/bootstrap``."""
    if event.ref == f"refs/heads/{BRANCH}":
        return _rerender(context, adapter, forge, event, repo)
    if repo.default_branch is None or event.ref != f"refs/heads/{repo.default_branch}":
        return {}
    try:
        outcome = onboard(context, adapter, forge, repo)
    except ForgeError as exc:
        # The check itself is done (silent, as it should be); a failed proposal is retried
        # by the next push, not by failing the job.
        log.warning("%s: onboarding failed: %s", repo.full_name, exc)
        audit_onboarding(context, forge, repo.full_name, f"error: {exc}")
        return {"onboarding": f"error: {exc}"}
    if outcome is None:
        return {}
    audit_onboarding(context, forge, repo.full_name, audited(outcome), outcome.pull_request_url)
    return {"onboarding": _said(outcome)}


def _rerender(
    context: WorkerContext, adapter: Adapter, forge: str, event: PushEvent, repo: RepoRef
) -> Summary:
    if adapter.open_mirror is None:
        return {}
    services = ChangeServices(
        adapter.forge,
        adapter.open_mirror,
        context.state.locks,
        bot_identity("ichor-bot", repo),  # nothing is committed: the author is never used
        cache=context.cache,
        registries=context.registries,
    )
    try:
        outcome = rerender_onboarding(repo, services, forge_kind=forge, head=event.after)
    except ForgeError as exc:
        # The next push tries again; the check itself is done (silent, as it should be).
        log.warning("%s: the onboarding description was not rewritten: %s", repo.full_name, exc)
        return {"onboarding": f"error: {exc}"}
    if outcome.result == "no-pull-request":
        return {}
    url = f" {outcome.pull_request_url}" if outcome.pull_request_url else ""
    return {"onboarding": f"{outcome.result}{url}"}


def installation_job(
    context: WorkerContext, forge: str, delivery_id: str, event: object
) -> Summary:
    """Each repository a GitHub App installation was given, onboarded."""
    assert isinstance(event, InstallationEvent)
    summary: Summary = {"forge": forge, "delivery": delivery_id, "event": "InstallationEvent"}
    if event.action not in INSTALLED_ACTIONS or forge != "github":
        return {**summary, "handled": False}
    base = context.settings.github_url.rstrip("/")
    results: dict[str, str] = {}
    unusable: PermanentForgeError | None = None  # the forge's settings, when they are
    for full_name in event.repositories:
        repo = RepoRef(
            ForgeKind.GITHUB,
            full_name,
            clone_url=f"{base}/{full_name}.git",
            web_url=f"{base}/{full_name}",
            installation_id=event.installation_id,
        )
        try:
            adapter = context.adapter_for(forge, full_name)
        except PermanentForgeError as exc:
            results[full_name] = f"error: {exc}"
            unusable = exc
            continue
        try:  # a transient error fails the job: its retry finds what was already opened
            outcome = onboard(context, adapter, forge, repo)
        except PermanentForgeError as exc:
            results[full_name] = f"error: {exc}"
            continue
        results[full_name] = "not onboarded here" if outcome is None else _said(outcome)
        if outcome is not None:
            url = outcome.pull_request_url
            audit_onboarding(context, forge, full_name, audited(outcome), url)
        log.info("delivery %s: %s onboarding: %s", delivery_id, full_name, results[full_name])
    if unusable is not None:
        log.error("delivery %s: onboarding cannot run: %s", delivery_id, unusable)
        return {**summary, "onboarding": results, **not_posted(Unposted.SETTINGS, str(unusable))}
    return {**summary, "handled": True, "onboarding": results}


def repository_added_job(
    context: WorkerContext, forge: str, delivery_id: str, event: object
) -> Summary:
    """A repository created under a GitLab instance's system hook or a Gitea/Forgejo
    organisation's (or instance's) webhook, onboarded as a GitHub App's new one is. The hook
    names little of it: the forge is asked for its clone URL and default branch."""
    assert isinstance(event, RepositoryAddedEvent)
    full_name = event.repo.full_name
    summary: Summary = {"forge": forge, "delivery": delivery_id, "event": "RepositoryAddedEvent"}
    try:
        adapter = context.adapter_for(forge, full_name)
    except PermanentForgeError as exc:
        log.error("delivery %s: onboarding cannot run: %s", delivery_id, exc)
        return {**summary, **not_posted(Unposted.SETTINGS, str(exc))}
    if not isinstance(adapter.forge, RepositoryLookup):
        return {**summary, "handled": False, "why": "this forge cannot describe a repository"}
    try:  # a transient error fails the job: its retry finds what was already opened
        outcome = onboard(context, adapter, forge, adapter.forge.repository(full_name))
    except PermanentForgeError as exc:
        return {**summary, "handled": True, "onboarding": {full_name: f"error: {exc}"}}
    said = "not onboarded here" if outcome is None else _said(outcome)
    if outcome is not None:
        audit_onboarding(context, forge, full_name, audited(outcome), outcome.pull_request_url)
    log.info("delivery %s: %s onboarding: %s", delivery_id, full_name, said)
    return {**summary, "handled": True, "onboarding": {full_name: said}}


def _said(outcome: OnboardingOutcome) -> str:
    url = f" {outcome.pull_request_url}" if outcome.pull_request_url else ""
    why = f": {outcome.reason}" if outcome.reason else ""
    return f"{outcome.result}{url}{why}"


# What an outcome is called in the audit (design.md 6.4): the status page's "Recent commands"
# lists it, so a repository that got no proposal says why there too, not only in the log.
_REFUSED = {
    "declined": "its onboarding pull request was closed; `ichor-bot onboard` proposes again",
    "configured": "it already has .ichor.yaml",
    "no-candidates": "no folder looks like a GitTarget path",
}


def audited(outcome: OnboardingOutcome) -> str:
    why = _REFUSED.get(outcome.result)
    if why is None:
        return outcome.result
    detail = f" ({outcome.reason})" if outcome.reason else ""
    return f"refused: {why}{detail}"


def audit_onboarding(
    context: WorkerContext, forge: str, full_name: str, result: str, pr_url: str | None = None
) -> None:
    AuditTrail(context.state.audit, clock=utc_now).record(
        forge=forge,
        repo=full_name,
        actor="ichor-bot",
        verb="onboard",
        result=result,
        pr_url=pr_url,
    )
