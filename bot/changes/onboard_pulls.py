"""Which open pull requests the check would block once the onboarding proposal is merged
(design.md 6.6, "What to expect").

The forge lists the open pull requests into the default branch; for the newest
:data:`MAX_CHECKED` of them the job fetches the head (the forge's pull request ref, so a fork's
too), finds the targets its changes touch (from the merge base with the default branch), and
gates those at the head with the proposal's files written, as if it were rebased onto the
merged proposal. Only the blobs of the touched targets are fetched. A head that cannot be
fetched is listed as not checked; the onboarding pull request itself is left out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bot.checks.compare import touched_targets
from bot.errors import ForgeError, IchorError
from bot.forges.base import ForgeAdapter, GitCredentials, PullRequestRef
from bot.gate.content.cache import FactsCache
from bot.gate.policy import GatePolicy
from bot.gate.run import run_gate
from bot.git.overlay import overlay
from bot.git.store import Mirror
from bot.onboarding.expect import OpenPulls, PullVerdict, pull_verdict
from bot.onboarding.proposal_body import BRANCH, MARKER
from bot.repos import RepoRef

log = logging.getLogger("ichor.onboarding")
MAX_LISTED = 30
MAX_CHECKED = 10


def list_open(forge: ForgeAdapter, repo: RepoRef, base: str) -> Sequence[PullRequestRef] | str:
    """The open pull requests into ``base`` but the onboarding one, or why none could be
    listed (which the body says; onboarding goes on without them)."""
    try:
        listed = forge.list_pull_requests(repo, base, limit=MAX_LISTED)
    except ForgeError as exc:
        log.warning("%s: the open pull requests could not be listed: %s", repo.full_name, exc)
        return str(exc)
    return [p for p in listed if p.head_ref != BRANCH and not (p.body or "").startswith(MARKER)]


@dataclass(frozen=True, slots=True)
class Judge:
    """What judging a pull request needs: the mirror holding the default branch's tip, and the
    proposal (its files and the policy its .ichor.yaml makes)."""

    mirror: Mirror
    credentials: GitCredentials | None
    base: str
    base_tip: str
    files: Mapping[str, bytes]
    policy: GatePolicy
    head_ref: Callable[[int], str]  # ForgeAdapter.pull_head_ref
    cache: FactsCache | None = None

    def all(self, listed: Sequence[PullRequestRef] | str) -> OpenPulls:
        if isinstance(listed, str):
            return OpenPulls(self.base, (), failed=listed)
        checked: list[PullVerdict] = []
        unchecked: list[int] = []
        for pull in listed:
            if len(checked) >= MAX_CHECKED:
                unchecked.append(pull.number)
                continue
            try:
                checked.append(self.one(pull))
            except IchorError as exc:
                log.info("pull request %d: not checked: %s", pull.number, exc)
                unchecked.append(pull.number)
        return OpenPulls(self.base, tuple(checked), tuple(unchecked))

    def one(self, pull: PullRequestRef) -> PullVerdict:
        ref = self.head_ref(pull.number)
        self.mirror.fetch(self.credentials, [ref], want=[pull.head_sha] if pull.head_sha else [])
        head = pull.head_sha or self.mirror.fetched_ref(ref)
        if head is None:
            raise IchorError(f"{ref} could not be fetched")
        repository = self.mirror.repository()
        since = repository.merge_base(self.base_tip, head) or self.base_tip
        changed = self.mirror.changed_paths(since, head)
        touched = touched_targets(self.policy, changed)
        reports = {}
        if touched:
            paths = [t.path for t in touched]
            self.mirror.prefetch_blobs(self.credentials, head, paths)
            # Only what was fetched: listing the sizes of other blobs would need them too.
            snapshot = repository.snapshot(head, paths)
            try:
                tree = overlay(snapshot, self.files)
                gated = run_gate(tree, GatePolicy(touched), cache=self.cache)
            finally:
                snapshot.close()
            reports = {r.name: r for r in gated.targets}
        return pull_verdict(pull.number, pull.url, pull.title, self.policy, changed, reports)
