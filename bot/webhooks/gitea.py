"""Gitea and Forgejo deliveries as forge-neutral events.

``X-Gitea-Event`` (or ``X-Forgejo-Event``) names the family and ``...-Event-Type`` the precise
hook: a pull request comment is event ``issue_comment``, type ``pull_request_comment``, while
event ``pull_request_comment`` is a *review* comment (type ``pull_request_review_comment``).
Gitea has no ping: its "Test Delivery" sends a push.
"""

from __future__ import annotations

from bot.repos import ForgeKind, RepoRef
from bot.repos.names import gitea_repository
from bot.webhooks.common import (
    EDITED_COMMENT,
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
from bot.webhooks.payload import JsonObject

_F = ForgeKind.GITEA
_PR_ACTIONS: dict[str, ChangeAction] = {
    "opened": "opened",
    "reopened": "reopened",
    "synchronized": "updated",
}
_REVIEWS = frozenset({"pull_request_approved", "pull_request_rejected", "pull_request_comment"})


def parse_gitea(event_name: str, event_type: str | None, payload: JsonObject) -> Event:
    if event_name == "push":
        return _push(event_name, payload)
    if event_name == "pull_request":
        return _pull_request(event_name, payload)
    if event_name == "issue_comment":
        return _comment(event_name, event_type, payload)
    action = payload.peek_text("action")
    if event_name == "repository":
        # An organisation's or the instance's webhook: a repository created under it.
        if action != "created":
            return ignored(_F, event_name, action, "only created repositories are onboarded")
        return RepositoryAddedEvent(_repo(payload))
    if event_name in _REVIEWS:
        return ignored(_F, event_name, action, "pull request reviews are not acted on")
    return ignored(_F, event_name, action, UNKNOWN_EVENT)


def _repo(p: JsonObject) -> RepoRef:
    repo = p.obj("repository")
    full_name = repo.repository("full_name", gitea_repository)
    return RepoRef(
        forge=_F,
        full_name=full_name,
        id=repo.opt_ident("id"),
        clone_url=repo.clone_url("clone_url", full_name),
        web_url=repo.web_url("html_url", full_name),
        default_branch=repo.opt_text("default_branch"),
    )


def _pull_request(event_name: str, p: JsonObject) -> Event:
    action = p.text("action")
    mapped = _PR_ACTIONS.get(action)
    if action == "edited" and changed(p, "ref"):
        mapped = "updated"  # retargeted: the verdict on record was against the old base
    if mapped is None:
        if action == "closed":
            merged = isinstance(pr := p.peek("pull_request"), dict) and pr.get("merged") is True
            reason = "merged" if merged else "closed"
            return ignored(_F, event_name, action, f"{reason} pull requests are not checked")
        return ignored(_F, event_name, action, "this pull request action does not need a check")
    pr = p.obj("pull_request")
    head, base = pr.obj("head"), pr.obj("base")
    repo = _repo(p)
    head_repo = head.opt_obj("repo")
    head_repo_name = (
        None if head_repo is None else head_repo.repository("full_name", gitea_repository)
    )
    return ChangeRequestEvent(
        repo=repo,
        number=p.number("number") if p.has("number") else pr.number("number"),
        action=mapped,
        head_sha=head.sha("sha"),
        base_ref=base.ref("ref"),
        head_ref=head.ref("ref"),
        base_sha=base.opt_sha("sha"),
        before_sha=None,  # Gitea's synchronized payload does not say what the head was
        head_repo_full_name=head_repo_name,
        is_fork=differs(head.peek("repo_id"), base.peek("repo_id"), head_repo_name, repo.full_name),
        author=pr.obj("user").name("login"),
        installation_id=None,
        draft=pr.flag("draft"),
    )


def _comment(event_name: str, event_type: str | None, p: JsonObject) -> Event:
    action = p.text("action")
    if action != "created":
        return ignored(_F, event_name, action, EDITED_COMMENT)
    issue, comment = p.obj("issue"), p.obj("comment")
    user = comment.obj("user")
    # is_pull is recent; the type header and issue.pull_request (older Gitea) say the same.
    on_change_request = (
        p.flag("is_pull") or event_type == "pull_request_comment" or issue.has("pull_request")
    )
    return CommentEvent(
        repo=_repo(p),
        number=issue.number("number"),
        on_change_request=on_change_request,
        body=comment.text("body"),
        author=user.name("login"),
        comment_id=comment.ident("id"),
        installation_id=None,
        # No bot flag in Gitea; its system users (Ghost -1, Actions -2) have negative ids.
        author_is_bot=_negative(user.peek("id")),
        created_at=comment.opt_time("created_at"),
    )


def _negative(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value < 0


def _push(event_name: str, p: JsonObject) -> Event:
    return push_event(_F, event_name, p, repo=_repo, pusher=_pusher)


def _pusher(p: JsonObject) -> str | None:
    pusher = p.opt_obj("pusher")
    return None if pusher is None else pusher.opt_text("login") or pusher.opt_text("username")
