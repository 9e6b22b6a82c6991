"""GitHub deliveries, by ``X-GitHub-Event``, as forge-neutral events."""

from __future__ import annotations

from collections.abc import Callable

from bot.repos import ForgeKind, RepoRef
from bot.repos.names import github_repository
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
    CheckRerequestEvent,
    CommentEvent,
    Event,
    InstallationEvent,
    PingEvent,
    RequestedActionEvent,
)
from bot.webhooks.github_merge_group import merge_group_event, queue_push, queue_rerun
from bot.webhooks.payload import JsonObject

_F = ForgeKind.GITHUB
# ready_for_review leaves the head alone, but a draft may have been skipped until now.
_PR_ACTIONS: dict[str, ChangeAction] = {
    "opened": "opened",
    "reopened": "reopened",
    "synchronize": "updated",
    "ready_for_review": "updated",
}


def parse_github(event_name: str, payload: JsonObject) -> Event:
    handler = _HANDLERS.get(event_name)
    if handler is None:
        return ignored(_F, event_name, payload.peek_text("action"), UNKNOWN_EVENT)
    return handler(event_name, payload)


def _repo(p: JsonObject) -> RepoRef:
    repo = p.obj("repository")
    full_name = repo.repository("full_name", github_repository)
    return RepoRef(
        forge=_F,
        full_name=full_name,
        id=repo.opt_ident("id"),
        clone_url=repo.clone_url("clone_url", full_name),
        web_url=repo.web_url("html_url", full_name),
        default_branch=repo.opt_text("default_branch"),
    )


def _installation(p: JsonObject) -> int | None:
    installation = p.opt_obj("installation")
    return None if installation is None else installation.number("id")


def _pull_request(event_name: str, p: JsonObject) -> Event:
    action = p.text("action")
    mapped = _PR_ACTIONS.get(action)
    if action == "edited" and changed(p, "base"):
        mapped = "updated"  # the verdict on record was against the old base
    if mapped is None:
        if action == "closed":
            merged = isinstance(pr := p.peek("pull_request"), dict) and pr.get("merged") is True
            reason = "merged" if merged else "closed"
            return ignored(_F, event_name, action, f"{reason} pull requests are not checked")
        return ignored(_F, event_name, action, "this pull request action does not need a check")
    pr = p.obj("pull_request")
    head, base = pr.obj("head"), pr.obj("base")
    repo = _repo(p)
    head_repo, base_repo = head.opt_obj("repo"), base.opt_obj("repo")
    head_repo_name = (
        None if head_repo is None else head_repo.repository("full_name", github_repository)
    )
    return ChangeRequestEvent(
        repo=repo,
        number=pr.number("number"),
        action=mapped,
        head_sha=head.sha("sha"),
        base_ref=base.ref("ref"),
        head_ref=head.ref("ref"),
        base_sha=base.opt_sha("sha"),
        before_sha=p.opt_sha("before") if action == "synchronize" else None,
        head_repo_full_name=head_repo_name,
        # A deleted fork arrives as head.repo null: still a fork.
        is_fork=head_repo is None
        or differs(
            head_repo.peek("id"),
            repo.id if base_repo is None else base_repo.peek("id"),
            head_repo_name,
            repo.full_name,
        ),
        author=pr.obj("user").name("login"),
        installation_id=_installation(p),
        draft=pr.flag("draft"),
    )


def _push(event_name: str, p: JsonObject) -> Event:
    group = queue_push(p, repo=_repo, installation_id=_installation)
    if group is not None:  # a merge group's branch: the group's check, once with its event
        return group
    return push_event(
        _F, event_name, p, repo=_repo, pusher=_pusher, installation_id=_installation, flags=True
    )


def _merge_group(event_name: str, p: JsonObject) -> Event:
    return merge_group_event(event_name, p, repo=_repo, installation_id=_installation)


def _pusher(p: JsonObject) -> str | None:
    pusher = p.opt_obj("pusher")
    return None if pusher is None else pusher.opt_text("name")


def _comment(event_name: str, p: JsonObject) -> Event:
    action = p.text("action")
    if action != "created":
        return ignored(_F, event_name, action, EDITED_COMMENT)
    if event_name == "pull_request_review_comment":
        number, on_change_request = p.obj("pull_request").number("number"), True
    else:
        issue = p.obj("issue")
        number, on_change_request = issue.number("number"), issue.has("pull_request")
    comment = p.obj("comment")
    user = comment.obj("user")
    login = user.name("login")
    return CommentEvent(
        repo=_repo(p),
        number=number,
        on_change_request=on_change_request,
        body=comment.text("body"),
        author=login,
        comment_id=comment.ident("id"),
        installation_id=_installation(p),
        author_is_bot=user.peek("type") == "Bot" or login.endswith("[bot]"),
        created_at=comment.opt_time("created_at"),
    )


def _check_run(event_name: str, p: JsonObject) -> Event:
    action = p.text("action")
    if action not in ("rerequested", "requested_action"):
        return ignored(_F, event_name, action, "only rerequested check runs are acted on")
    run = p.obj("check_run")
    if action == "requested_action":
        sender = p.obj("sender")
        login = sender.name("login")
        return RequestedActionEvent(
            repo=_repo(p),
            head_sha=run.sha("head_sha"),
            identifier=p.obj("requested_action").text("identifier"),
            check_run_id=run.number("id"),
            installation_id=p.obj("installation").number("id"),
            actor=login,
            actor_is_bot=sender.peek("type") == "Bot" or login.endswith("[bot]"),
            pull_numbers=tuple(pr.number("number") for pr in run.objs("pull_requests")),
        )
    suite = run.opt_obj("check_suite")
    suite_id = None if suite is None else suite.opt_number("id")
    return _rerun(p, run, suite, run_id=run.number("id"), suite_id=suite_id)


def _check_suite(event_name: str, p: JsonObject) -> Event:
    action = p.text("action")
    if action != "rerequested":
        # "requested" comes with every push; the push and pull_request events drive checks.
        return ignored(_F, event_name, action, "only rerequested check suites are acted on")
    suite = p.obj("check_suite")
    return _rerun(p, suite, suite, run_id=None, suite_id=suite.number("id"))


def _rerun(
    p: JsonObject,
    holder: JsonObject,
    suite: JsonObject | None,
    *,
    run_id: int | None,
    suite_id: int | None,
) -> Event:
    """A check asked to run again: ``holder`` (the check run, or the suite) names the head and
    the pull requests; a merge queue's branch makes it its group's check again."""
    repo, installation = _repo(p), p.obj("installation").number("id")
    head_sha = holder.sha("head_sha")
    group = queue_rerun(suite, head_sha, repo, installation)
    if group is not None:
        return group
    return CheckRerequestEvent(
        repo=repo,
        head_sha=head_sha,
        check_run_id=run_id,
        check_suite_id=suite_id,
        pull_numbers=tuple(pr.number("number") for pr in holder.objs("pull_requests")),
        installation_id=installation,
    )


def _installation_event(event_name: str, p: JsonObject) -> Event:
    installation = p.obj("installation")
    if event_name == "installation_repositories":
        listed, removed = p.objs("repositories_added"), p.objs("repositories_removed")
    else:
        listed, removed = p.objs("repositories"), ()
    return InstallationEvent(
        action=p.text("action"),
        installation_id=installation.number("id"),
        account=_account(installation.obj("account")),
        repositories=tuple(r.repository("full_name", github_repository) for r in listed),
        removed=tuple(r.repository("full_name", github_repository) for r in removed),
    )


def _account(account: JsonObject) -> str:
    # A user or organization has a login; an enterprise installation's account has a slug.
    return account.name("login") if account.has("login") else account.name("slug")


def _ping(event_name: str, p: JsonObject) -> Event:
    return PingEvent(_F, p.opt_number("hook_id"))


_HANDLERS: dict[str, Callable[[str, JsonObject], Event]] = {
    "pull_request": _pull_request,
    "push": _push,
    "merge_group": _merge_group,
    "issue_comment": _comment,
    "pull_request_review_comment": _comment,
    "check_run": _check_run,
    "check_suite": _check_suite,
    "installation": _installation_event,
    "installation_repositories": _installation_event,
    "ping": _ping,
}
