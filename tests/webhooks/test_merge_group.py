"""GitHub merge queues at the edge: a queue branch's name read strictly, and the three deliveries
that name a merge group (``merge_group``, the push of its branch, a re-run of its check)
parsed into one :class:`MergeGroupEvent`."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest

from bot.repos import ForgeKind
from bot.webhooks import (
    CheckRerequestEvent,
    Ignored,
    MergeGroupEvent,
    PushEvent,
    WebhookError,
    parse_delivery,
)
from bot.webhooks.merge_queue import QueueRef, parse_queue_ref
from tests.conftest import SHARED, load_fixture
from tests.support.merge_group import merge_group_payload, queue_ref
from tests.webhooks.helpers import github_headers

HEAD, BASE, OTHER = "a" * 40, "b" * 40, "c" * 40
SCHEMA = SHARED / "forge-data/github/openapi/octokit-webhooks-schemas-7.6.1.schema.json"


def github(event: str, payload: dict[str, Any]) -> Any:
    body = json.dumps(payload).encode()
    return parse_delivery(ForgeKind.GITHUB, github_headers(event), body).event


# The queue branch's name


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        (
            f"refs/heads/gh-readonly-queue/main/pr-123-{BASE}",
            ("main", BASE, (123,)),
        ),
        (  # a check suite's head_branch has no refs/heads/
            f"gh-readonly-queue/main/pr-9-{BASE}",
            ("main", BASE, (9,)),
        ),
        (  # the base branch holds slashes, and a segment that looks like an entry
            f"refs/heads/gh-readonly-queue/release/pr-42-{OTHER}/v1/pr-7-{BASE}",
            (f"release/pr-42-{OTHER}/v1", BASE, (7,)),
        ),
        (  # several pull requests, one named twice: each once, in order; the first's base
            f"refs/heads/gh-readonly-queue/main/pr-7-{BASE}-pr-8-{OTHER}-pr-7-{OTHER}",
            ("main", BASE, (7, 8)),
        ),
        (  # SHA-256 repositories
            f"refs/heads/gh-readonly-queue/main/pr-1-{'d' * 64}",
            ("main", "d" * 64, (1,)),
        ),
    ],
)
def test_a_queue_branch_names_its_base_and_pull_requests(
    ref: str, expected: tuple[str, str, tuple[int, ...]]
) -> None:
    found = parse_queue_ref(ref)
    assert found is not None
    assert (found.base_ref, found.base_sha, found.pulls) == expected
    assert found.ref == (ref if ref.startswith("refs/") else f"refs/heads/{ref}")


@pytest.mark.parametrize(
    "ref",
    [
        "refs/heads/main",
        f"refs/heads/feature/pr-1-{BASE}",  # not under the queue's prefix
        f"refs/tags/gh-readonly-queue/main/pr-1-{BASE}",
        f"refs/heads/gh-readonly-queue/pr-1-{BASE}",  # no base branch
        "refs/heads/gh-readonly-queue/main/pr-1",  # no commit
        f"refs/heads/gh-readonly-queue/main/pr-1-{BASE[:12]}",  # an abbreviated commit
        f"refs/heads/gh-readonly-queue/main/pr-1-{BASE.upper()}",
        f"refs/heads/gh-readonly-queue/main/pr-0-{BASE}",
        f"refs/heads/gh-readonly-queue/main/pr-01-{BASE}",  # a leading zero
        f"refs/heads/gh-readonly-queue/main/pr-12345678901-{BASE}",  # over ten digits
        f"refs/heads/gh-readonly-queue/main/pr-1-{BASE}x",  # trailing text
        f"refs/heads/gh-readonly-queue/main/pr-1-{BASE}--pr-2-{BASE}",
        f"refs/heads/gh-readonly-queue/main/PR-1-{BASE}",
        f"refs/heads/gh-readonly-queue/ma..in/pr-1-{BASE}",  # not a ref git accepts
        f"refs/heads/gh-readonly-queue/main/pr-1-{BASE} ",
        f"refs/heads/gh-readonly-queue/main/pr-1-{BASE}/",
    ],
)
def test_anything_else_is_not_a_queue_branch(ref: str) -> None:
    assert parse_queue_ref(ref) is None


def test_the_reading_is_bounded_by_the_length_of_a_ref() -> None:
    first = f"refs/heads/gh-readonly-queue/main/pr-1-{BASE}"
    entry = f"-pr-1234567-{BASE}"
    longest = first + entry * ((1024 - len(first)) // len(entry))
    found = parse_queue_ref(longest)
    assert found == QueueRef(longest, "main", BASE, (1, 1234567))
    assert parse_queue_ref(longest + entry) is None  # over git's 1,024 characters
    assert parse_queue_ref("refs/heads/gh-readonly-queue/main/" + "pr-1-" * 190 + "x") is None


# The merge_group event


@pytest.mark.needs_shared
@pytest.mark.parametrize("action", ["checks_requested", "destroyed"])
def test_the_built_payloads_follow_githubs_schema(action: str) -> None:
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.Draft7Validator(
        {"$ref": f"#/definitions/merge_group${action}", "definitions": schema["definitions"]}
    )
    payload = merge_group_payload(head_sha=HEAD, base_sha=BASE, pulls=(3, 4), action=action)
    assert [e.message for e in validator.iter_errors(payload)] == []


def test_checks_requested_names_the_head_the_base_and_the_queued_pull_requests() -> None:
    event = github("merge_group", merge_group_payload(head_sha=HEAD, base_sha=BASE, pulls=(3, 4)))
    assert isinstance(event, MergeGroupEvent)
    assert event.action == "checks_requested"
    assert (event.head_sha, event.base_sha, event.base_ref) == (HEAD, BASE, "main")
    assert event.head_ref == queue_ref("main", BASE, (3, 4))
    assert event.pulls == (3, 4)
    assert event.installation_id == 42
    assert event.repo.full_name == "Codertocat/Hello-World"


def test_destroyed_names_the_group_whose_work_ends() -> None:
    payload = merge_group_payload(head_sha=HEAD, base_sha=BASE, action="destroyed")
    event = github("merge_group", payload)
    assert isinstance(event, MergeGroupEvent)
    assert (event.action, event.head_sha) == ("destroyed", HEAD)


def test_a_head_ref_of_another_shape_names_no_pull_request() -> None:
    payload = merge_group_payload(head_sha=HEAD, base_sha=BASE, head_ref="refs/heads/queue-x")
    event = github("merge_group", payload)
    assert isinstance(event, MergeGroupEvent)
    assert (event.pulls, event.head_ref) == ((), "refs/heads/queue-x")


def test_an_unknown_action_is_ignored_with_its_reason() -> None:
    payload = merge_group_payload(head_sha=HEAD, base_sha=BASE, action="requeued")
    event = github("merge_group", payload)
    assert isinstance(event, Ignored)
    assert (event.action, event.reason) == ("requeued", "unknown merge group action")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("head_sha", "abc", "field merge_group.head_sha: not a commit SHA"),
        ("base_sha", None, "missing field merge_group.base_sha"),
        ("base_ref", "refs/tags/v1", "field merge_group.base_ref: not a branch"),
        ("base_ref", "refs/heads/../x", "field merge_group.base_ref: not a valid git ref"),
        ("head_ref", "refs/heads/a b", "field merge_group.head_ref: not a valid git ref"),
    ],
)
def test_a_malformed_group_is_refused_naming_the_field(
    field: str, value: object, message: str
) -> None:
    payload = merge_group_payload(head_sha=HEAD, base_sha=BASE)
    payload["merge_group"][field] = value
    with pytest.raises(WebhookError, match=message.replace(".", r"\.")):
        github("merge_group", payload)


# The push of the group's branch, and a re-run of its check


def push(ref: str, *, deleted: bool = False, after: str = HEAD) -> dict[str, Any]:
    payload: dict[str, Any] = copy.deepcopy(load_fixture("webhooks/github/push__branch.json"))
    payload.update(ref=ref, before="0" * 40, after=after, created=True, deleted=deleted)
    return payload


def test_the_push_of_a_queue_branch_is_the_groups_check() -> None:
    ref = queue_ref("release/v1", BASE, (5,))
    event = github("push", push(ref))
    assert event == MergeGroupEvent(
        event.repo, "checks_requested", HEAD, ref, "release/v1", BASE, (5,), event.installation_id
    )
    assert event.installation_id is not None


def test_the_deletion_of_a_queue_branch_and_other_branches_stay_pushes() -> None:
    ref = queue_ref("main", BASE, (5,))
    gone = github("push", push(ref, deleted=True, after="0" * 40))
    assert isinstance(gone, PushEvent) and gone.deleted
    other = github("push", push("refs/heads/feature/pr-1-" + BASE))
    assert isinstance(other, PushEvent)


@pytest.mark.parametrize("event_name", ["check_run", "check_suite"])
def test_a_rerun_on_a_queue_branch_checks_the_group_again(event_name: str) -> None:
    fixture = f"webhooks/github/{event_name}__rerequested.json"
    payload: dict[str, Any] = copy.deepcopy(load_fixture(fixture))
    suite = (
        payload["check_run"]["check_suite"] if event_name == "check_run" else payload["check_suite"]
    )
    before = github(event_name, payload)
    assert isinstance(before, CheckRerequestEvent)
    suite["head_branch"] = queue_ref("main", BASE, (11,)).removeprefix("refs/heads/")
    event = github(event_name, payload)
    assert isinstance(event, MergeGroupEvent)
    assert (event.action, event.head_sha, event.base_sha) == ("rerequested", before.head_sha, BASE)
    assert (event.pulls, event.installation_id) == ((11,), before.installation_id)
