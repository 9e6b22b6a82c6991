"""The onboarding pull request's description, written again when someone pushes to
``ichor/bootstrap`` (design.md 6.6): the proposal as it now is on that branch, gated afresh.

Triggered by a push to the branch of a repository whose default branch has no
``.ichor.yaml``. Only the bot's own open pull request from the branch into the default branch
is touched (its description starts with the onboarding marker); nothing is pushed, and the
description is sent only when it changed, so the bot's own push (which fires the same event)
leaves it as it is. The open pull requests the check would block are judged as when it was
opened, with the branch's files (what it adds to the default branch) written on their heads.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.changes.engine import ChangeServices
from bot.changes.onboard_pulls import Judge, list_open
from bot.config.schema import load_config
from bot.errors import GitStoreError
from bot.forges.base import GitCredentials, PullRequestRef
from bot.gate.policy import CONFIG_FILE
from bot.git.snapshot import EntryKind
from bot.onboarding.expect import OpenPulls
from bot.onboarding.proposal_body import BRANCH, MARKER, onboarding_body
from bot.onboarding.rerender import proposal_at
from bot.registry.builtin import crd_catalog
from bot.repos import RepoRef

log = logging.getLogger("ichor.onboarding")
Rerendered = Literal["re-rendered", "unchanged", "no-pull-request"]


@dataclass(frozen=True, slots=True)
class RerenderOutcome:
    result: Rerendered
    pull_request_url: str | None = None


def rerender_onboarding(
    repo: RepoRef, services: ChangeServices, *, forge_kind: str, head: str
) -> RerenderOutcome:
    """Write the description of the onboarding pull request again for the commit ``head``
    pushed to ``ichor/bootstrap``. Raises ForgeErrors for the caller to report."""
    forge, base = services.forge, repo.default_branch
    if base is None:
        return RerenderOutcome("no-pull-request")  # a push names its repository's default
    found = forge.find_pull_request(repo, BRANCH, base)
    if found is None or not (found.body or "").startswith(MARKER):
        return RerenderOutcome("no-pull-request")
    credentials = forge.git_credentials(repo)
    listed = list_open(forge, repo, base)
    body = _render(repo, base, head, forge_kind, services, credentials, listed)
    if body == found.body:
        return RerenderOutcome("unchanged", found.url)
    forge.update_pull_request_body(repo, found.number, body)
    log.info("%s: onboarding description written again for %s", repo.full_name, head[:12])
    return RerenderOutcome("re-rendered", found.url)


def _render(
    repo: RepoRef,
    base: str,
    head: str,
    forge_kind: str,
    services: ChangeServices,
    credentials: GitCredentials | None,
    listed: Sequence[PullRequestRef] | str,
) -> str:
    with services.open_mirror(repo) as mirror:
        base_ref = f"refs/heads/{base}"
        mirror.fetch(credentials, [f"refs/heads/{BRANCH}", base_ref], want=[head])
        tip = mirror.fetched_ref(base_ref)
        if tip is None:
            raise GitStoreError(f"the branch {base!r} could not be fetched")
        mirror.prefetch_blobs(credentials, head, [""])
        snapshot = mirror.repository().snapshot(head)
        try:
            proposal = proposal_at(snapshot, catalog=crd_catalog(), cache=services.cache)
            loaded = load_config(snapshot)
            # What the branch adds to the default branch: the proposal's files, as edited.
            since = mirror.repository().merge_base(tip, head) or tip
            added = {
                path: entry.read()
                for path in mirror.changed_paths(since, head)
                if (entry := snapshot.get(path)) is not None and entry.kind is EntryKind.FILE
            }
        finally:
            snapshot.close()
        pulls = OpenPulls(base, (), failed=f"the proposed {CONFIG_FILE} cannot be read")
        if loaded.config is not None:
            judge = Judge(
                mirror,
                credentials,
                base,
                tip,
                added,
                loaded.config.gate_policy(),
                services.forge.pull_head_ref,
                services.cache,
            )
            pulls = judge.all(listed)
        return onboarding_body(proposal, forge_kind, pulls)
