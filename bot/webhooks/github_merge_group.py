"""GitHub's merge queue deliveries as :class:`MergeGroupEvent` (design.md 4).

Three deliveries name a merge group: the ``merge_group`` event itself (``checks_requested``,
``destroyed``), the push that creates the group's ``gh-readonly-queue/…`` branch, and a re-run
of a check whose suite is on such a branch. The first two ask for the same check of the same
head and become the same event, so the queue runs one job for them, whichever comes first; the
push names its base by the branch's name alone (:mod:`bot.webhooks.merge_queue`).
"""

from __future__ import annotations

from collections.abc import Callable

from bot.repos import ForgeKind, RepoRef
from bot.webhooks.common import ignored
from bot.webhooks.events import Event, MergeGroupAction, MergeGroupEvent
from bot.webhooks.merge_queue import parse_queue_ref
from bot.webhooks.payload import JsonObject, WebhookError, is_zero_sha

_F = ForgeKind.GITHUB
_ACTIONS: dict[str, MergeGroupAction] = {
    "checks_requested": "checks_requested",
    "destroyed": "destroyed",
}
_BRANCH = "refs/heads/"


def merge_group_event(
    event_name: str,
    p: JsonObject,
    *,
    repo: Callable[[JsonObject], RepoRef],
    installation_id: Callable[[JsonObject], int | None],
) -> Event:
    """``merge_group``: its head, base and queued pull requests."""
    action = _ACTIONS.get(p.text("action"))
    if action is None:
        return ignored(_F, event_name, p.peek_text("action"), "unknown merge group action")
    group = p.obj("merge_group")
    head_ref = _full(group.ref("head_ref"))
    base_ref = _full(group.ref("base_ref"))
    if not base_ref.startswith(_BRANCH):
        raise WebhookError("field merge_group.base_ref: not a branch (refs/heads/...)")
    queued = parse_queue_ref(head_ref)
    return MergeGroupEvent(
        repo=repo(p),
        action=action,
        head_sha=group.sha("head_sha"),
        head_ref=head_ref,
        base_ref=base_ref.removeprefix(_BRANCH),
        base_sha=group.sha("base_sha"),
        # A head ref of another shape names no pull request: then no approval carries over.
        pulls=() if queued is None else queued.pulls,
        installation_id=installation_id(p),
    )


def queue_push(
    p: JsonObject,
    *,
    repo: Callable[[JsonObject], RepoRef],
    installation_id: Callable[[JsonObject], int | None],
) -> MergeGroupEvent | None:
    """The push of a merge group's branch as the group's check; None for any other push
    (another branch, a tag, the branch's deletion once the group is done)."""
    queued = parse_queue_ref(p.ref("ref"))
    if queued is None or (p.has("deleted") and p.flag("deleted")):
        return None
    after = p.sha("after")
    if is_zero_sha(after):
        return None
    return MergeGroupEvent(
        repo=repo(p),
        action="checks_requested",
        head_sha=after,
        head_ref=queued.ref,
        base_ref=queued.base_ref,
        base_sha=queued.base_sha,
        pulls=queued.pulls,
        installation_id=installation_id(p),
    )


def queue_rerun(
    suite: JsonObject | None, head_sha: str, repo: RepoRef, installation_id: int
) -> MergeGroupEvent | None:
    """A re-requested check run or suite on a merge group's head, as that group's check again
    (not its pull requests' nor a push's): None when the suite's branch is not a queue's."""
    branch = None if suite is None else suite.opt_text("head_branch")
    queued = None if branch is None else parse_queue_ref(branch)
    if queued is None:
        return None
    return MergeGroupEvent(
        repo=repo,
        action="rerequested",
        head_sha=head_sha,
        head_ref=queued.ref,
        base_ref=queued.base_ref,
        base_sha=queued.base_sha,
        pulls=queued.pulls,
        installation_id=installation_id,
    )


def _full(ref: str) -> str:
    return ref if ref.startswith("refs/") else _BRANCH + ref
