"""Small pieces the three forge mappings share: ignoring with a reason, refs, forks."""

from __future__ import annotations

from collections.abc import Callable

from bot.repos import ForgeKind, RepoRef
from bot.webhooks.events import Event, Ignored, PushEvent
from bot.webhooks.payload import JsonObject, is_zero_sha

TAG_PUSH = "tag pushes are not checked (the bot checks branches)"
NOT_A_BRANCH = "only pushes to branches (refs/heads/...) are checked"
EDITED_COMMENT = "only new comments are acted on (edited or deleted ones are not)"
UNKNOWN_EVENT = "unknown event"


def ignored(forge: ForgeKind, event_name: str, action: str | None, reason: str) -> Ignored:
    # The action is the payload's own text: kept short, since Ignored lands in logs and pages.
    return Ignored(forge, event_name, None if action is None else action[:64], reason)


def non_branch_reason(ref: str) -> str | None:
    """Why a push to ``ref`` is ignored, or None for a branch."""
    if ref.startswith("refs/heads/"):
        return None
    return TAG_PUSH if ref.startswith("refs/tags/") else NOT_A_BRANCH


def push_event(
    forge: ForgeKind,
    event_name: str,
    p: JsonObject,
    *,
    repo: Callable[[JsonObject], RepoRef],
    pusher: Callable[[JsonObject], str | None],
    installation_id: Callable[[JsonObject], int | None] = lambda _: None,
    flags: bool = False,
) -> Event:
    """A push hook, alike on the three forges but for where the repository, the pusher and
        the installation are written, and whether it says ``created``/``deleted`` itself (``flags``,
    GitHub) or only by a zero SHA. A tag push reads no more than its ref."""
    ref = p.ref("ref")
    skip = non_branch_reason(ref)
    if skip is not None:
        return ignored(forge, event_name, None, skip)
    before, after = p.sha("before"), p.sha("after")
    return PushEvent(
        repo=repo(p),
        ref=ref,
        before=before,
        after=after,
        created=p.flag("created") if flags and p.has("created") else is_zero_sha(before),
        deleted=p.flag("deleted") if flags and p.has("deleted") else is_zero_sha(after),
        pusher=pusher(p),
        installation_id=installation_id(p),
    )


def changed(p: JsonObject, key: str) -> bool:
    """Whether an ``edited``/``update`` hook says ``changes.<key>`` changed.

    Each forge names the base branch differently: GitHub ``base``, GitLab ``target_branch``,
    Gitea/Forgejo ``ref``. A retargeted pull request must be checked again, since the verdict
    on record was against the old base.
    """
    changes = p.peek("changes")
    return isinstance(changes, dict) and isinstance(changes.get(key), dict)


def differs(head_id: object, base_id: object, head_name: str | None, base_name: str | None) -> bool:
    """Whether the head repository is another one than the base: a fork.

    Ids decide when both are known, names otherwise; when neither can tell, it is a fork,
    because a fork gets less trust and mistaking one for the base repository is the risk.
    """
    if isinstance(head_id, int | str) and isinstance(base_id, int | str):
        return str(head_id) != str(base_id)
    if head_name is not None and base_name is not None:
        return head_name.casefold() != base_name.casefold()
    return True
