"""Dispatch by route and the forge's own headers, delivery ids, and the mapping's edge cases."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.repos import ForgeKind, RepoRef
from bot.webhooks import (
    ChangeRequestEvent,
    CommentEvent,
    Delivery,
    Ignored,
    InstallationEvent,
    PushEvent,
    RepositoryAddedEvent,
    WebhookError,
    parse_delivery,
)
from tests.conftest import load_fixture
from tests.webhooks.helpers import (
    forgejo_headers,
    gitea_headers,
    github_headers,
    gitlab_headers,
    raw,
)

ZERO = "0" * 40


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = load_fixture(f"webhooks/{name}")
    return data


def parse(forge: ForgeKind, headers: dict[str, str], payload: dict[str, Any]) -> Delivery:
    return parse_delivery(forge, headers, json.dumps(payload).encode())


def github(event: str, payload: dict[str, Any]) -> Any:
    return parse(ForgeKind.GITHUB, github_headers(event), payload).event


def gitlab(event: str, payload: dict[str, Any]) -> Any:
    return parse(ForgeKind.GITLAB, gitlab_headers(event), payload).event


def gitea(event: str, payload: dict[str, Any], event_type: str | None = None) -> Any:
    return parse(ForgeKind.GITEA, gitea_headers(event, event_type), payload).event


# Delivery ids and event headers


def test_github_delivery_and_event_headers_are_required() -> None:
    body = raw("github/ping__repository.json")
    headers = github_headers("ping")
    del headers["x-github-delivery"]
    with pytest.raises(WebhookError, match="X-GitHub-Delivery"):
        parse_delivery(ForgeKind.GITHUB, headers, body)
    with pytest.raises(WebhookError, match="missing X-GitHub-Event"):
        parse_delivery(ForgeKind.GITHUB, {"x-github-delivery": "d"}, body)


def test_gitlab_delivery_id_prefers_the_signed_id_then_idempotency_key_then_event_uuid() -> None:
    body = raw("gitlab/push__woodpecker.json")
    headers = gitlab_headers("Push Hook", idempotency_key="idem", event_uuid="uuid")
    assert parse_delivery(ForgeKind.GITLAB, headers, body).delivery_id == "idem"
    assert parse_delivery(ForgeKind.GITLAB, {**headers, "webhook-id": "idem"}, body).delivery_id
    signed = {**headers, "webhook-id": "signed"}
    assert parse_delivery(ForgeKind.GITLAB, signed, body).delivery_id == "signed"
    older = gitlab_headers("Push Hook", idempotency_key=None, event_uuid="uuid")
    assert parse_delivery(ForgeKind.GITLAB, older, body).delivery_id == "uuid"
    with pytest.raises(WebhookError, match="Idempotency-Key"):
        parse_delivery(ForgeKind.GITLAB, gitlab_headers("Push Hook", None, None), body)


def test_gitea_and_forgejo_delivery_ids_and_flavor() -> None:
    body = raw("gitea/push__branch.json")
    delivery = parse_delivery(ForgeKind.GITEA, gitea_headers("push", delivery="g-1"), body)
    assert (delivery.flavor, delivery.delivery_id, delivery.event_name) == ("gitea", "g-1", "push")
    delivery = parse_delivery(ForgeKind.GITEA, forgejo_headers("push", delivery="f-1"), body)
    assert (delivery.forge, delivery.flavor, delivery.delivery_id) == (
        ForgeKind.GITEA,
        "forgejo",
        "f-1",
    )
    headers = gitea_headers("push")
    del headers["x-gitea-delivery"]
    with pytest.raises(WebhookError, match="X-Gitea-Delivery"):
        parse_delivery(ForgeKind.GITEA, headers, body)


def test_the_gitea_route_never_reads_github_style_headers() -> None:
    body = raw("gitea/push__branch.json")
    github_only = {"x-github-event": "push", "x-github-delivery": "d-1"}
    with pytest.raises(WebhookError, match="missing X-Gitea-Event"):
        parse_delivery(ForgeKind.GITEA, github_only, body)
    mixed = {**gitea_headers("push"), "x-github-event": "pull_request"}
    assert isinstance(parse_delivery(ForgeKind.GITEA, mixed, body).event, PushEvent)


def test_the_github_route_never_reads_gitea_headers() -> None:
    with pytest.raises(WebhookError, match="X-GitHub-Event"):
        parse_delivery(ForgeKind.GITHUB, {"x-gitea-event": "push", "x-gitea-delivery": "d"}, b"{}")


@pytest.mark.parametrize(
    "delivery_id", ["", "has space", "tab\there", "x" * 201, "new\nline", "caf\u00e9"]
)
def test_unusable_delivery_ids_are_refused(delivery_id: str) -> None:
    headers = github_headers("ping", delivery_id)
    with pytest.raises(WebhookError):
        parse_delivery(ForgeKind.GITHUB, headers, raw("github/ping__repository.json"))


def test_unusable_event_names_are_refused() -> None:
    for name in ("", " push", "push\r\nX-Injected: 1", "x" * 101):
        with pytest.raises(WebhookError):
            parse_delivery(ForgeKind.GITHUB, github_headers(name), b"{}")


@pytest.mark.parametrize(
    ("forge", "headers"),
    [
        (ForgeKind.GITHUB, github_headers("star")),
        (ForgeKind.GITLAB, gitlab_headers("Pipeline Hook")),
        (ForgeKind.GITEA, gitea_headers("release")),
    ],
)
def test_unknown_events_are_ignored(forge: ForgeKind, headers: dict[str, str]) -> None:
    body = b'{"action": "created", "object_attributes": {"action": "created"}}'
    delivery = parse_delivery(forge, headers, body)
    assert delivery.event == Ignored(forge, delivery.event_name, "created", "unknown event")


# GitHub variants of the recorded payloads


def test_github_ready_for_review_is_an_update_and_other_actions_are_ignored() -> None:
    payload = fixture("github/pull_request__opened.json")
    payload["action"] = "ready_for_review"
    assert github("pull_request", payload).action == "updated"
    for action in ("edited", "labeled", "converted_to_draft", "assigned"):
        payload["action"] = action
        event = github("pull_request", payload)
        assert isinstance(event, Ignored) and event.action == action


def test_a_retargeted_pull_request_is_checked_again() -> None:
    payload = fixture("github/pull_request__opened.json")
    payload["action"] = "edited"
    payload["changes"] = {"base": {"ref": {"from": "develop"}, "sha": {"from": "0" * 40}}}
    assert github("pull_request", payload).action == "updated"
    payload["changes"] = {"title": {"from": "old title"}}
    assert isinstance(github("pull_request", payload), Ignored)
    mr = fixture("gitlab/merge_request__update-woodpecker.json")
    mr["object_attributes"].pop("oldrev", None)
    mr["changes"] = {"target_branch": {"previous": "develop", "current": "main"}}
    assert gitlab("Merge Request Hook", mr).action == "updated"
    # Gitea and Forgejo name the base branch's change ``changes.ref`` (ChangesPayload.Ref).
    pr = fixture("gitea/pull_request__opened.json")
    pr["action"] = "edited"
    pr["changes"] = {"ref": {"from": "develop"}}
    assert gitea("pull_request", pr).action == "updated"
    pr["changes"] = {"title": {"from": "old title"}}
    assert isinstance(gitea("pull_request", pr), Ignored)


def test_github_fork_and_draft_pull_requests() -> None:
    payload = fixture("github/pull_request__opened.json")
    head_repo = payload["pull_request"]["head"]["repo"]
    head_repo.update(id=1, full_name="someone/Hello-World")
    payload["pull_request"]["draft"] = True
    event = github("pull_request", payload)
    assert (event.is_fork, event.head_repo_full_name, event.draft) == (
        True,
        "someone/Hello-World",
        True,
    )
    payload["pull_request"]["head"]["repo"] = None  # the fork was deleted
    event = github("pull_request", payload)
    assert (event.is_fork, event.head_repo_full_name) == (True, None)


def test_github_comment_edits_are_ignored_and_bots_are_recognised() -> None:
    payload = fixture("github/issue_comment__created.json")
    for action in ("edited", "deleted"):
        payload["action"] = action
        assert "only new comments" in github("issue_comment", payload).reason
    payload["action"] = "created"
    payload["comment"]["user"].update(login="ichor-bot[bot]", type="Bot")
    assert github("issue_comment", payload).author_is_bot is True


def test_github_branch_deletion_and_non_branch_refs() -> None:
    payload = fixture("github/push__branch.json")
    payload.update(before=payload["after"], after=ZERO, created=False, deleted=True)
    event = github("push", payload)
    assert isinstance(event, PushEvent) and (event.deleted, event.after) == (True, ZERO)
    payload["ref"] = "refs/notes/commits"
    assert "only pushes to branches" in github("push", payload).reason


def test_github_installation_repositories_removed() -> None:
    payload = fixture("github/installation_repositories__added.json")
    payload["action"] = "removed"
    payload["repositories_removed"], payload["repositories_added"] = (
        payload["repositories_added"],
        [],
    )
    event = github("installation_repositories", payload)
    assert isinstance(event, InstallationEvent)
    assert (event.action, event.repositories, event.removed) == (
        "removed",
        (),
        ("Codertocat/Space",),
    )


# GitLab variants


def test_gitlab_update_without_new_commits_is_ignored_unless_it_leaves_draft() -> None:
    payload = fixture("gitlab/merge_request__update-woodpecker.json")
    del payload["object_attributes"]["oldrev"]
    event = gitlab("Merge Request Hook", payload)
    assert isinstance(event, Ignored) and "without new commits" in event.reason
    payload["changes"]["draft"] = {"previous": True, "current": False}
    event = gitlab("Merge Request Hook", payload)
    assert isinstance(event, ChangeRequestEvent)
    assert (event.action, event.before_sha) == ("updated", None)


def test_gitlab_fork_merge_request() -> None:
    payload = fixture("gitlab/merge_request__open-woodpecker.json")
    payload["object_attributes"]["source_project_id"] = 1
    payload["object_attributes"]["source"]["path_with_namespace"] = "someone/test_ci_tmp"
    event = gitlab("Merge Request Hook", payload)
    assert (event.is_fork, event.head_repo_full_name) == (True, "someone/test_ci_tmp")


@pytest.mark.parametrize(
    ("hook", "reason"),
    [
        ("Tag Push Hook", "tag pushes are not checked"),
        ("Confidential Note Hook", "confidential comments"),
    ],
)
def test_gitlab_hooks_ignored_on_purpose(hook: str, reason: str) -> None:
    assert reason in gitlab(hook, fixture("gitlab/push__woodpecker.json")).reason


def test_a_gitlab_system_hook_brings_pushes_merge_requests_and_new_projects() -> None:
    push = gitlab("System Hook", fixture("gitlab/push__woodpecker.json"))
    assert push == gitlab("Push Hook", fixture("gitlab/push__woodpecker.json"))
    opened = fixture("gitlab/merge_request__open-woodpecker.json")
    assert gitlab("System Hook", opened) == gitlab("Merge Request Hook", opened)
    created = {
        "event_name": "project_create",
        "path_with_namespace": "acme/gitops",
        "project_id": 74,
    }
    assert gitlab("System Hook", created) == RepositoryAddedEvent(
        RepoRef(ForgeKind.GITLAB, "acme/gitops", id="74")
    )
    renamed = {"event_name": "project_rename", "path_with_namespace": "acme/ops"}
    assert "only pushes, merge requests and new projects" in gitlab("System Hook", renamed).reason
    with pytest.raises(WebhookError, match="path_with_namespace"):
        gitlab("System Hook", {"event_name": "project_create", "path_with_namespace": "../x"})


def test_a_gitea_organisation_hook_brings_created_repositories() -> None:
    payload = fixture("gitea/push__branch.json")
    created = {
        "action": "created",
        "repository": payload["repository"],
        "sender": payload["sender"],
    }
    event = gitea("repository", created)
    assert isinstance(event, RepositoryAddedEvent)
    assert event.repo.full_name == payload["repository"]["full_name"]
    deleted = {**created, "action": "deleted"}
    assert "only created repositories" in gitea("repository", deleted).reason


def test_gitlab_notes_edits_system_notes_issues_snippets_and_bots() -> None:
    payload = fixture("gitlab/note__merge_request-go-gitlab.json")
    payload["object_attributes"]["action"] = "update"
    assert "only new comments" in gitlab("Note Hook", payload).reason
    payload["object_attributes"].update(action="create", system=True)
    assert "system notes" in gitlab("Note Hook", payload).reason
    payload["object_attributes"].update(system=False, noteable_type="Issue")
    payload["issue"] = {"iid": 7}
    event = gitlab("Note Hook", payload)
    assert (event.number, event.on_change_request) == (7, False)
    payload["object_attributes"]["noteable_type"] = "Snippet"
    assert "snippets" in gitlab("Note Hook", payload).reason
    payload["object_attributes"]["noteable_type"] = "MergeRequest"
    payload["user"]["username"] = "project_278964_bot_3f1c2a"
    assert gitlab("Note Hook", payload).author_is_bot is True


def test_gitlab_body_of_another_kind_than_the_header_is_refused() -> None:
    with pytest.raises(WebhookError, match="object_kind"):
        gitlab("Merge Request Hook", fixture("gitlab/push__woodpecker.json"))


def test_gitlab_branch_deletion() -> None:
    payload = fixture("gitlab/push__go-gitlab.json")
    payload["after"] = ZERO
    event = gitlab("Push Hook", payload)
    assert (event.deleted, event.created) == (True, False)


# Gitea variants


def test_gitea_comment_on_a_pull_request_by_is_pull_or_type_header() -> None:
    payload = fixture("gitea/issue_comment__created-go-scm-old.json")
    assert gitea("issue_comment", payload).on_change_request is False
    assert gitea("issue_comment", payload, "pull_request_comment").on_change_request is True
    payload["is_pull"] = True
    assert gitea("issue_comment", payload, "issue_comment").on_change_request is True


def test_gitea_comment_edits_and_system_users() -> None:
    payload = fixture("gitea/issue_comment__created-go-scm-old.json")
    payload["action"] = "edited"
    assert isinstance(gitea("issue_comment", payload), Ignored)
    payload["action"] = "created"
    payload["comment"]["user"].update(id=-2, login="gitea-actions")
    event = gitea("issue_comment", payload)
    assert isinstance(event, CommentEvent) and event.author_is_bot is True


def test_gitea_fork_pull_request_and_tag_push() -> None:
    payload = fixture("gitea/pull_request__reopened.json")
    payload["pull_request"]["head"]["repo_id"] = 1
    assert gitea("pull_request", payload).is_fork is True
    push = fixture("gitea/push__branch.json")
    push["ref"] = "refs/tags/v1.0"
    assert "tag pushes" in gitea("push", push).reason


# When a comment was written: what an /approve may cover (design.md 5.1)


@pytest.mark.parametrize(
    ("parse_as", "name", "where", "stamp", "expected"),
    [
        (
            "github",
            "github/issue_comment__created.json",
            "comment",
            None,
            "2019-05-15T15:20:21+00:00",
        ),
        (
            "gitlab",
            "gitlab/note__merge_request-go-gitlab.json",
            "object_attributes",
            "2015-05-17 18:21:36 UTC",
            "2015-05-17T18:21:36+00:00",
        ),
        (
            "gitlab",
            "gitlab/note__merge_request-go-gitlab.json",
            "object_attributes",
            "2019-06-05T14:32:20.211Z",
            "2019-06-05T14:32:20.211000+00:00",
        ),
        (
            "gitea",
            "gitea/issue_comment__created-go-scm-old.json",
            "comment",
            "2022-07-04T00:34:39+02:00",
            "2022-07-03T22:34:39+00:00",
        ),
        (
            "gitea",
            "gitea/issue_comment__created-go-scm-old.json",
            "comment",
            "0001-01-01T00:00:00Z",
            None,
        ),
        ("github", "github/issue_comment__created.json", "comment", "yesterday", None),
        ("github", "github/issue_comment__created.json", "comment", "2019-05-15T15:20:33", None),
    ],
)
def test_a_comments_time_is_read_in_utc_or_left_unknown(
    parse_as: str, name: str, where: str, stamp: str | None, expected: str | None
) -> None:
    payload = fixture(name)
    if stamp is not None:
        payload[where]["created_at"] = stamp
    if parse_as == "gitea":
        payload["action"] = "created"
    event = {"github": github, "gitlab": gitlab, "gitea": gitea}[parse_as](
        "Note Hook" if parse_as == "gitlab" else "issue_comment", payload
    )
    assert isinstance(event, CommentEvent)
    assert event.created_at == expected
