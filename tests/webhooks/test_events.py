"""Events go to queue jobs as JSON: a lossless round trip, and strict decoding of anything else."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from bot.repos import ForgeKind, RepoRef
from bot.webhooks import (
    ACTIONABLE,
    ChangeRequestEvent,
    CheckRerequestEvent,
    CommentEvent,
    Delivery,
    Event,
    Ignored,
    InstallationEvent,
    MergeGroupEvent,
    PingEvent,
    PushEvent,
    RepositoryAddedEvent,
    RequestedActionEvent,
    WebhookError,
    delivery_from_dict,
    delivery_to_dict,
    event_from_dict,
    event_to_dict,
    is_actionable,
)

SHA_A, SHA_B = "a" * 40, "b" * 64
REPO = RepoRef(ForgeKind.GITLAB, "group/sub/project", "72081820", None, "https://gl.test/x", "main")
STAMP = "2026-12-04T20:00:00.123000+00:00"
EVENTS: list[Event] = [
    ChangeRequestEvent(
        repo=REPO,
        number=3,
        action="updated",
        head_sha=SHA_A,
        base_ref="main",
        head_ref="feature/x",
        base_sha=None,
        before_sha=SHA_B,
        head_repo_full_name="fork/project",
        is_fork=True,
        author="someone",
        installation_id=None,
        draft=True,
    ),
    PushEvent(REPO, "refs/heads/main", "0" * 40, SHA_A, True, False, None, 12),
    CommentEvent(
        REPO,
        None,
        False,
        "/ichor recheck\n✓ ünïcode",
        "bot",
        "991",
        5,
        True,
        "2026-12-04T20:00:00.123000+00:00",
    ),
    CheckRerequestEvent(REPO, SHA_A, None, 118578147, (2, 7), 957387),
    RequestedActionEvent(REPO, SHA_A, "lgtm|26764", 1494503112, 690857, "octocat", False, (7,)),
    InstallationEvent("added", 957387, "Codertocat", ("a/b", "c/d"), ("e/f",)),
    PingEvent(ForgeKind.GITHUB, None),
    Ignored(
        ForgeKind.GITEA, "pull_request_approved", None, "pull request reviews are not acted on"
    ),
    MergeGroupEvent(
        REPO,
        "checks_requested",
        SHA_A,
        f"refs/heads/gh-readonly-queue/main/pr-3-{SHA_B}",
        "main",
        SHA_B,
        (3, 4),
        957387,
    ),
    RepositoryAddedEvent(RepoRef(ForgeKind.GITLAB, "acme/gitops", id="74")),
]


def test_every_event_type_is_covered() -> None:
    assert {type(event) for event in EVENTS} == {*ACTIONABLE, PingEvent, Ignored}


@pytest.mark.parametrize("event", EVENTS, ids=lambda event: type(event).__name__)
def test_round_trip_through_json(event: Event) -> None:
    data = event_to_dict(event)
    assert isinstance(data["type"], str)
    assert json.loads(json.dumps(data)) == data  # JSON-safe: no tuples, enums or objects
    assert event_from_dict(json.loads(json.dumps(data))) == event


def test_the_dict_form_is_plain() -> None:
    data = event_to_dict(EVENTS[3])
    assert data == {
        "type": "check_rerequest",
        "repo": {
            "forge": "gitlab",
            "full_name": "group/sub/project",
            "id": "72081820",
            "clone_url": None,
            "web_url": "https://gl.test/x",
            "default_branch": "main",
            "installation_id": None,
        },
        "head_sha": SHA_A,
        "check_run_id": None,
        "check_suite_id": 118578147,
        "pull_numbers": [2, 7],
        "installation_id": 957387,
    }


def test_delivery_round_trip() -> None:
    delivery = Delivery(ForgeKind.GITEA, "forgejo", "issue_comment", "f-1", EVENTS[2])
    data = delivery_to_dict(delivery)
    assert delivery_from_dict(json.loads(json.dumps(data))) == delivery


def mutated(event: Event, **changes: Any) -> dict[str, Any]:
    data = event_to_dict(event)
    for key, value in changes.items():
        if value is KeyError:
            del data[key]
        else:
            data[key] = value
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "missing or unknown type"),
        ({"type": "merge_request"}, "missing or unknown type"),
        (mutated(EVENTS[0], number=KeyError), "event.number: missing"),
        (mutated(EVENTS[0], number=True), "event.number: unexpected value"),
        (mutated(EVENTS[0], number="3"), "event.number"),
        (mutated(EVENTS[0], draft=1), "event.draft"),
        (mutated(EVENTS[0], action="synchronize"), "event.action"),
        (mutated(EVENTS[0], surprise=1), "unexpected field(s) surprise"),
        (mutated(EVENTS[0], repo={**event_to_dict(EVENTS[0])["repo"], "forge": "bitbucket"}),
         "event.repo.forge"),
        (mutated(EVENTS[0], repo="group/project"), "event.repo"),
        (mutated(EVENTS[3], pull_numbers=[2, "7"]), "event.pull_numbers[1]"),
        (mutated(EVENTS[3], pull_numbers=None), "event.pull_numbers"),
        (mutated(EVENTS[6], forge="GitHub"), "event.forge"),
    ],
)  # fmt: skip
def test_decoding_is_strict(data: dict[str, Any], message: str) -> None:
    with pytest.raises(WebhookError) as caught:
        event_from_dict(data)
    assert message in str(caught.value)


def test_decoding_refuses_non_objects() -> None:
    not_objects: list[Any] = [None, [], "push"]
    for data in not_objects:
        with pytest.raises(WebhookError):
            event_from_dict(data)
    with pytest.raises(WebhookError):
        delivery_from_dict({"forge": "github", "event": None})
    bad_flavor = delivery_to_dict(Delivery(ForgeKind.GITHUB, "github", "ping", "d", EVENTS[6]))
    bad_flavor["flavor"] = "gogs"
    with pytest.raises(WebhookError, match=r"delivery\.flavor"):
        delivery_from_dict(bad_flavor)


def test_events_are_frozen_and_slotted() -> None:
    push = EVENTS[1]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(push, "ref", "refs/heads/other")  # noqa: B010 - the point is that it fails
    assert not hasattr(push, "__dict__")


def test_only_pings_and_ignored_deliveries_are_not_actionable() -> None:
    assert [is_actionable(event) for event in EVENTS] == [True] * 6 + [False, False, True, True]


def test_a_comment_queued_before_it_carried_its_time_still_decodes() -> None:
    """A job queued by the release before comments carried ``created_at`` runs after an
    upgrade, its time unknown (an /approve then says so rather than guessing)."""
    comment = next(e for e in EVENTS if isinstance(e, CommentEvent))
    old = mutated(comment, created_at=KeyError)
    decoded = event_from_dict(old)
    assert isinstance(decoded, CommentEvent) and decoded.created_at is None
