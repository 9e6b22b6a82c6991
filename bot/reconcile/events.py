"""The check the reconciler queues for a head: the event a pull request's webhook would have
been, under a delivery id of its own that names the pull request and the head (so the queue's
dedupe by delivery id queues one check per head, whichever run asks)."""

from __future__ import annotations

import hashlib

from bot.forges.base import PullRequestRef
from bot.repos import RepoRef
from bot.webhooks import ChangeRequestEvent

EVENT_NAME = "reconcile"  # what the status page lists it as
DELIVERY_PREFIX = "reconcile-"


def delivery_id(pull: str, head_sha: str) -> str:
    """``reconcile-<digest>`` of the pull request's key and the head."""
    digest = hashlib.sha256(f"{pull}@{head_sha}".encode()).hexdigest()[:32]
    return DELIVERY_PREFIX + digest


def change_request(repo: RepoRef, pull: PullRequestRef) -> ChangeRequestEvent | None:
    """The event a webhook would have brought for ``pull`` at its head; None when the listing
    did not name the head or the base branch."""
    if not pull.head_sha or not pull.base_ref:
        return None
    return ChangeRequestEvent(
        repo=repo,
        number=pull.number,
        action="updated",
        head_sha=pull.head_sha,
        base_ref=pull.base_ref,
        head_ref=pull.head_ref or "",
        base_sha=pull.base_sha,
        before_sha=None,
        head_repo_full_name=None if pull.from_fork else repo.full_name,
        is_fork=pull.from_fork,
        author=pull.author or "",
        installation_id=repo.installation_id,
        draft=False,
    )
