"""GitLab deliveries, by ``X-Gitlab-Event``, as forge-neutral events.

GitLab test deliveries ("Test" in the hook settings) are ordinary events, so there is no ping.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.repos import ForgeKind, RepoRef
from bot.repos.names import gitlab_repository
from bot.webhooks.common import (
    EDITED_COMMENT,
    TAG_PUSH,
    UNKNOWN_EVENT,
    changed,
    differs,
    ignored,
    push_event,
)
from bot.webhooks.events import (
    ChangeAction,
    ChangeRequestEvent,
    CommentEvent,
    Event,
    RepositoryAddedEvent,
)
from bot.webhooks.payload import JsonObject, WebhookError

_F = ForgeKind.GITLAB
# GitLab users carry no bot flag in hooks; project and group access tokens act as users named
# project_<id>_bot_<hex> / group_<id>_bot_<hex>, and GitLab's own bots end in -bot.
_BOT = re.compile(r"(?:project|group)_\d+_bot\w*|[\w.-]*[-_]bot", re.IGNORECASE)
_IGNORED_HOOKS = {
    "Tag Push Hook": TAG_PUSH,
    # Internal notes: answering one in public would leak it.
    "Confidential Note Hook": "confidential comments are not acted on",
}
# A system hook's events, by the payload's event_name or object_kind: pushes and merge
# requests come in their project hook's shape; a new project is onboarded.
_SYSTEM_EVENTS = {"push": "Push Hook", "merge_request": "Merge Request Hook"}
_MR_IGNORED = {
    "close": "closed merge requests are not checked",
    "merge": "merged merge requests are not checked",
    "approved": "approvals do not need a check",
    "unapproved": "approvals do not need a check",
    "approval": "approvals do not need a check",
    "unapproval": "approvals do not need a check",
}


def parse_gitlab(event_name: str, payload: JsonObject) -> Event:
    if event_name == "System Hook":
        return _system_hook(payload)
    reason = _IGNORED_HOOKS.get(event_name)
    handler = _HANDLERS.get(event_name)
    if reason is not None or handler is None:
        return ignored(_F, event_name, _action(payload), reason or UNKNOWN_EVENT)
    kind, parse = handler
    # A body of another kind than the header says would be read with the wrong field names.
    if payload.peek("object_kind") not in (None, kind):
        raise WebhookError(f"field object_kind: does not match the X-Gitlab-Event header ({kind})")
    return parse(event_name, payload)


def _system_hook(p: JsonObject) -> Event:
    """An instance's system hook: the events of every project, in their own shapes."""
    kind = p.peek_text("event_name") or p.peek_text("object_kind")
    if kind == "project_create":
        full_name = p.repository("path_with_namespace", gitlab_repository)
        return RepositoryAddedEvent(RepoRef(_F, full_name, id=p.opt_ident("project_id")))
    hook = _SYSTEM_EVENTS.get(kind or "")
    if hook is None:
        reason = "only pushes, merge requests and new projects of a system hook are acted on"
        return ignored(_F, "System Hook", kind, reason)
    _, parse = _HANDLERS[hook]
    return parse(hook, p)


def _action(p: JsonObject) -> str | None:
    attributes = p.peek("object_attributes")
    action = attributes.get("action") if isinstance(attributes, dict) else None
    return action if isinstance(action, str) else None


def _repo(p: JsonObject) -> RepoRef:
    project = p.obj("project")
    full_name = project.repository("path_with_namespace", gitlab_repository)
    url_key = "git_http_url" if project.has("git_http_url") else "http_url"
    return RepoRef(
        forge=_F,
        full_name=full_name,
        id=project.opt_ident("id") or p.opt_ident("project_id"),
        clone_url=project.clone_url(url_key, full_name),
        web_url=project.web_url("web_url", full_name),
        default_branch=project.opt_text("default_branch"),
    )


def _merge_request(event_name: str, p: JsonObject) -> Event:
    attributes = p.obj("object_attributes")
    action = attributes.opt_text("action")
    mapped: ChangeAction | None = None
    if action == "open":
        mapped = "opened"
    elif action == "reopen":
        mapped = "reopened"
    # An update is checked only for new commits (oldrev), leaving draft (as GitHub's
    # ready_for_review is) or a new target branch; a title or label edit is not.
    elif action == "update" and (
        attributes.has("oldrev") or _left_draft(p) or changed(p, "target_branch")
    ):
        mapped = "updated"
    if mapped is None:
        reason = _MR_IGNORED.get(action or "", "this merge request action does not need a check")
        if action == "update":
            reason = "a merge request update without new commits is not checked"
        return ignored(_F, event_name, action, reason)
    repo = _repo(p)
    source, target = attributes.opt_obj("source"), attributes.opt_obj("target")
    head_repo = (
        None if source is None else source.opt_repository("path_with_namespace", gitlab_repository)
    )
    base_repo = (
        None if target is None else target.opt_repository("path_with_namespace", gitlab_repository)
    )
    return ChangeRequestEvent(
        repo=repo,
        number=attributes.number("iid"),
        action=mapped,
        head_sha=attributes.obj("last_commit").sha("id"),
        base_ref=attributes.ref("target_branch"),
        head_ref=attributes.ref("source_branch"),
        base_sha=None,  # merge request hooks do not carry the target branch's commit
        before_sha=attributes.opt_sha("oldrev"),
        head_repo_full_name=head_repo,
        is_fork=differs(
            attributes.peek("source_project_id"),
            attributes.peek("target_project_id"),
            head_repo,
            base_repo or repo.full_name,
        ),
        author=p.obj("user").name("username"),
        installation_id=None,
        draft=attributes.flag("draft") or attributes.flag("work_in_progress"),
    )


def _left_draft(p: JsonObject) -> bool:
    changes = p.peek("changes")
    if not isinstance(changes, dict):
        return False
    for key in ("draft", "work_in_progress"):
        change = changes.get(key)
        if isinstance(change, dict) and change.get("previous") is True:
            return change.get("current") is False
    return False


def _note(event_name: str, p: JsonObject) -> Event:
    attributes = p.obj("object_attributes")
    # Older GitLab sent note hooks without an action; each of those was a new note.
    action = attributes.opt_text("action")
    if action not in (None, "create"):
        return ignored(_F, event_name, action, EDITED_COMMENT)
    if attributes.flag("system"):
        return ignored(_F, event_name, action, "system notes are not comments")
    noteable = attributes.text("noteable_type")
    number: int | None = None
    if noteable == "MergeRequest":
        number = p.obj("merge_request").number("iid")
    elif noteable == "Issue":
        number = p.obj("issue").number("iid")
    elif noteable != "Commit":
        return ignored(_F, event_name, action, "comments on snippets and the like are not acted on")
    author = p.obj("user").name("username")
    return CommentEvent(
        repo=_repo(p),
        number=number,
        on_change_request=noteable == "MergeRequest",
        body=attributes.text("note"),
        author=author,
        comment_id=attributes.ident("id"),
        installation_id=None,
        author_is_bot=_BOT.fullmatch(author) is not None,
        created_at=attributes.opt_time("created_at"),
    )


def _push(event_name: str, p: JsonObject) -> Event:
    return push_event(_F, event_name, p, repo=_repo, pusher=lambda p: p.opt_text("user_username"))


_HANDLERS: dict[str, tuple[str, Callable[[str, JsonObject], Event]]] = {
    "Push Hook": ("push", _push),
    "Merge Request Hook": ("merge_request", _merge_request),
    "Note Hook": ("note", _note),
}
