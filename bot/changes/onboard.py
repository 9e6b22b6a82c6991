"""The onboarding job (design.md 6.6): a repository without ``.ichor.yaml`` gets, once, a pull
request on ``ichor/bootstrap`` proposing one, built by the pure core in :mod:`bot.onboarding`.

Order, as for a change request: the open pull request on the branch is looked up first
(found: nothing is fetched or pushed); a repository that declined (closed the proposal
unmerged) is left alone by every trigger; the open pull requests into the default branch are
listed; then, holding the repository's lock, the default branch is fetched, the proposal built
on its tip, its files committed in the mirror and pushed once with a lease, and the newest open
pull requests judged as if rebased onto it (:mod:`bot.changes.onboard_pulls`), for the body's
"What to expect". A closed proposal is noticed without the forge telling: it was proposed,
and no open pull request is left on the branch (a merged one added ``.ichor.yaml``, so no
trigger reaches here).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.changes.engine import LOCK_TTL, LOCK_WAIT, ChangeServices
from bot.changes.onboard_pulls import Judge, list_open
from bot.config.schema import parse_config
from bot.errors import GitStoreError
from bot.forges.base import GitCredentials, PullRequestRef
from bot.gate.policy import CONFIG_FILE
from bot.git.commit import build_commit
from bot.git.push import push_branch, remote_branch_head, remote_default_branch
from bot.onboarding.proposal import build_proposal
from bot.onboarding.proposal_body import BRANCH, TITLE, onboarding_body
from bot.registry.builtin import crd_catalog
from bot.repos import RepoRef
from bot.state.base import OnboardingMemory, onboarding_key, repo_lock_key

log = logging.getLogger("ichor.onboarding")
Result = Literal["pr-opened", "pr-existing", "declined", "configured", "no-candidates"]


@dataclass(frozen=True, slots=True)
class OnboardingOutcome:
    result: Result
    pull_request_url: str | None = None
    reason: str | None = None

    @property
    def created(self) -> bool:
        return self.result == "pr-opened"


@dataclass(frozen=True, slots=True)
class _Proposal:
    files: int
    body: str


def open_onboarding(
    repo: RepoRef,
    services: ChangeServices,
    *,
    forge_kind: str,
    memory: OnboardingMemory,
    requested: bool = False,
) -> OnboardingOutcome:
    """Propose ``.ichor.yaml`` for ``repo``; ``requested`` (``ichor-bot onboard``) proposes
    again after a decline. Raises ForgeErrors for the caller to report (and retry)."""
    key = onboarding_key(forge_kind, repo.full_name)
    if not requested and memory.declined(key):
        return OnboardingOutcome("declined", reason="its onboarding pull request was closed")
    forge = services.forge
    credentials = forge.git_credentials(repo)
    base = repo.default_branch
    if base is None:
        base = _default_branch(repo, services, credentials)
    found = forge.find_pull_request(repo, BRANCH, base)
    if found is not None:
        memory.remember_proposed(key)
        return OnboardingOutcome("pr-existing", found.url)
    if requested:
        memory.forget_declined(key)
    elif memory.proposed(key):
        log.info("%s: its onboarding pull request was closed; not proposing again", repo.full_name)
        memory.remember_declined(key)
        return OnboardingOutcome("declined", reason="its onboarding pull request was closed")
    listed = list_open(forge, repo, base)  # what the check would block: the body says
    job = _Job(repo, base, forge_kind, services, credentials, requested, listed)
    proposal = _build_and_push(job)
    if isinstance(proposal, OnboardingOutcome):
        return proposal
    pull = forge.open_pull_request(repo, head=BRANCH, base=base, title=TITLE, body=proposal.body)
    memory.remember_proposed(key)
    log.info("%s: onboarding proposed in %s (%d files)", repo.full_name, pull.url, proposal.files)
    return OnboardingOutcome("pr-opened", pull.url)


@dataclass(frozen=True, slots=True)
class _Job:
    repo: RepoRef
    base: str
    forge_kind: str
    services: ChangeServices
    credentials: GitCredentials | None
    requested: bool
    listed: Sequence[PullRequestRef] | str  # the open pull requests, or why not listed


def _build_and_push(job: _Job) -> _Proposal | OnboardingOutcome:
    repo, base, services, credentials = job.repo, job.base, job.services, job.credentials
    lock = repo_lock_key(job.forge_kind, repo.full_name)
    with (
        services.lock.hold(lock, ttl=LOCK_TTL, wait=LOCK_WAIT),
        services.open_mirror(repo) as mirror,
    ):
        ref = f"refs/heads/{base}"
        mirror.fetch(credentials, [ref])
        tip = mirror.fetched_ref(ref)
        if tip is None:
            raise GitStoreError(f"the branch {base!r} could not be fetched")
        # Detection reads every YAML file: the whole tree's blobs, in one request.
        mirror.prefetch_blobs(credentials, tip, [""])
        snapshot = mirror.repository().snapshot(tip)
        try:
            if snapshot.get(CONFIG_FILE) is not None:
                return OnboardingOutcome("configured", reason=f"{CONFIG_FILE} is already there")
            proposal = build_proposal(snapshot, catalog=crd_catalog(), cache=services.cache)
        finally:
            snapshot.close()
        if proposal.empty and not proposal.looks_like_gitops and not job.requested:
            log.info(
                "%s: no Kubernetes object at %s; nothing to propose unasked",
                repo.full_name,
                tip[:12],
            )
            return OnboardingOutcome("no-candidates", reason="no YAML in it is a Kubernetes object")
        said = (
            "one new, empty target: no folder qualified"
            if proposal.empty
            else f"{len(proposal.targets)} detected target(s)"
        )
        commit = build_commit(
            mirror,
            parent=tip,
            changes=dict(proposal.files),
            message=f"{TITLE}\n\nProposed by Ichor Bot: {said}.",
            author=services.author,
        )
        expected = remote_branch_head(mirror, credentials, BRANCH)
        push_branch(mirror, credentials, commit=commit, branch=BRANCH, expected=expected)
        config = parse_config(proposal.files[CONFIG_FILE]).config
        assert config is not None  # the proposal's own .ichor.yaml is always valid
        judge = Judge(
            mirror,
            credentials,
            base,
            tip,
            proposal.files,
            config.gate_policy(),
            services.forge.pull_head_ref,
            services.cache,
        )
        pulls = judge.all(job.listed)
        return _Proposal(len(proposal.files), onboarding_body(proposal, job.forge_kind, pulls))


def _default_branch(
    repo: RepoRef, services: ChangeServices, credentials: GitCredentials | None
) -> str:
    """The remote HEAD's branch, for a repository named without one (a GitHub installation
    lists names only)."""
    with services.open_mirror(repo) as mirror:
        return remote_default_branch(mirror, credentials)
