"""What a check is asked to check, from the event that asked for it.

A request names the commit, what it is compared with (its :data:`Baseline`), the refs that
bring both into the mirror, and the pull request whose newest head wins; how the comparison
is made follows from the baseline's kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeGuard

from bot.repos import RepoRef
from bot.state.base import merge_group_key, pull_key
from bot.webhooks import ChangeRequestEvent, CheckRerequestEvent, MergeGroupEvent, PushEvent
from bot.webhooks.payload import is_zero_sha


@dataclass(frozen=True, slots=True)
class MergeBase:
    """Compared with the merge base of the head and ``sha`` (a pull request's base, or the tip of
    ``branch`` once fetched when the event names no base commit, as GitLab's hooks do)."""

    sha: str | None
    branch: str | None = None


@dataclass(frozen=True, slots=True)
class Commit:
    """Compared with this commit (a push's ``before``); None checks every target and marks
    every issue new."""

    sha: str | None


@dataclass(frozen=True, slots=True)
class Rerun:
    """A re-requested check: compared as the pull request among ``pulls`` whose head this is,
    else with the head's first parent (a re-run of a push's check)."""

    pulls: tuple[int, ...]


Baseline = MergeBase | Commit | Rerun


@dataclass(frozen=True, slots=True)
class QueuedGroup:
    """The GitHub merge group a check is of: the key its end is recorded under
    (:func:`bot.state.base.merge_group_key`) and the pull requests it queues, whose approvals
    carry over (design.md 5.1)."""

    key: str
    pulls: tuple[int, ...]
    forge: str  # the forge's name the pull requests are filed under (pull_key)


# The ref a forge serves a pull request's head under (``ForgeAdapter.pull_head_ref``).
PullHeadRef = Callable[[int], str]


@dataclass(frozen=True, slots=True)
class CheckRequest:
    repo: RepoRef
    head_sha: str
    baseline: Baseline
    fetch_refs: tuple[str, ...]
    external_id: str  # the delivery that asked for the check
    pull: str | None = None  # pull key (bot.state.base.pull_key) for "newest head wins"
    number: int | None = None  # the pull request, for a summary comment
    # Who opened the pull request, when known: their own /approve does not count (design.md 5.1).
    author: str | None = None
    # A merge group's check: nothing is posted once the group is destroyed (design.md 4).
    group: QueuedGroup | None = None
    # The branch checked (a pull request's head branch, the branch pushed), for the status
    # page's verdict per branch; None when the event does not say.
    branch: str | None = None

    @property
    def base_sha(self) -> str | None:
        """The base commit as known so far (a merge base's is resolved when fetched)."""
        return None if isinstance(self.baseline, Rerun) else self.baseline.sha


def acted_on(repo: RepoRef, installation_id: int | None) -> RepoRef:
    """The delivery's repository with the installation that acts on it (GitHub)."""
    return replace(repo, installation_id=installation_id)


def pull_request(
    repo: RepoRef,
    head_sha: str,
    base: MergeBase,
    number: int,
    *,
    forge: str,
    external_id: str,
    pull_head_ref: PullHeadRef,
    author: str | None = None,
    branch: str | None = None,
) -> CheckRequest:
    """A pull request's check: its head ref and base branch fetched, newest head wins."""
    refs: tuple[str, ...] = (pull_head_ref(number),)
    if base.branch is not None:
        refs += (f"refs/heads/{base.branch}",)
    return CheckRequest(
        repo,
        head_sha,
        base,
        refs,
        external_id,
        pull=pull_key(forge, repo.full_name, number),
        number=number,
        author=author,
        branch=branch,
    )


def request_for(
    event: object, *, forge: str, delivery_id: str, pull_head_ref: PullHeadRef
) -> CheckRequest | None:
    """The check an event asks for, or None when it asks for none."""
    if isinstance(event, ChangeRequestEvent):
        return pull_request(
            acted_on(event.repo, event.installation_id),
            event.head_sha,
            MergeBase(event.base_sha, event.base_ref),
            event.number,
            forge=forge,
            external_id=delivery_id,
            pull_head_ref=pull_head_ref,
            # GitLab's hook names the user who triggered it, not the merge request's author;
            # unknown is safer than wrong (the /approve command looks the author up itself).
            author=None if event.repo.forge == "gitlab" else event.author or None,
            branch=event.head_ref or None,
        )
    if isinstance(event, PushEvent):
        return _push_request(event, delivery_id)
    if isinstance(event, MergeGroupEvent):
        return _group_request(event, forge, delivery_id)
    if isinstance(event, CheckRerequestEvent):
        return CheckRequest(
            acted_on(event.repo, event.installation_id),
            event.head_sha,
            Rerun(event.pull_numbers),
            (),
            delivery_id,
        )
    return None


CheckedEvent = ChangeRequestEvent | PushEvent | CheckRerequestEvent | MergeGroupEvent


def asks_for_check(event: object) -> TypeGuard[CheckedEvent]:
    """Whether :func:`request_for` makes a request of this event (before any adapter is built)."""
    if isinstance(event, PushEvent):  # a branch that exists after the push
        return not (
            event.deleted or not event.ref.startswith("refs/heads/") or is_zero_sha(event.after)
        )
    if isinstance(event, MergeGroupEvent):  # a destroyed group asks for nothing more
        return event.action != "destroyed"
    return isinstance(event, ChangeRequestEvent | CheckRerequestEvent)


def _group_request(event: MergeGroupEvent, forge: str, delivery_id: str) -> CheckRequest | None:
    """A merge group's head, compared as a pull request into the queue's base would be: with
    the group's base commit (the base branch's tip, or the head of the group queued before it),
    under the configuration there. The group's branch brings both; the base branch is fetched
    too, in case the group's branch is gone already."""
    if not asks_for_check(event):
        return None
    return CheckRequest(
        acted_on(event.repo, event.installation_id),
        event.head_sha,
        MergeBase(event.base_sha, event.base_ref),
        (event.head_ref, f"refs/heads/{event.base_ref}"),
        delivery_id,
        group=QueuedGroup(
            merge_group_key(forge, event.repo.full_name, event.head_sha), event.pulls, forge
        ),
        branch=_branch(event.head_ref),
    )


def _push_request(event: PushEvent, delivery_id: str) -> CheckRequest | None:
    if not asks_for_check(event):
        return None
    repo = acted_on(event.repo, event.installation_id)
    default = event.repo.default_branch
    if default and event.ref != f"refs/heads/{default}":
        # A branch other than the default one is checked as a pull request into the default
        # branch would be (its merge base, the default branch's configuration), so its verdict
        # never disagrees with that pull request's check on the same commit.
        return CheckRequest(
            repo,
            event.after,
            MergeBase(None, default),
            (event.ref, f"refs/heads/{default}"),
            delivery_id,
            branch=_branch(event.ref),
        )
    base = None if event.created or is_zero_sha(event.before) else event.before
    return CheckRequest(
        repo, event.after, Commit(base), (event.ref,), delivery_id, branch=_branch(event.ref)
    )


def _branch(ref: str) -> str:
    return ref.removeprefix("refs/heads/")
