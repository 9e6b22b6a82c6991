"""Hostile and malformed bodies: a WebhookError naming the field, never a crash."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.repos import ForgeKind
from bot.webhooks import Delivery, WebhookError, parse_delivery
from tests.conftest import load_fixture
from tests.webhooks.helpers import gitea_headers, github_headers, gitlab_headers


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = load_fixture(f"webhooks/{name}")
    return data


def parse(forge: ForgeKind, headers: dict[str, str], payload: dict[str, Any]) -> Delivery:
    return parse_delivery(forge, headers, json.dumps(payload).encode())


def github(event: str, payload: dict[str, Any]) -> Any:
    return parse(ForgeKind.GITHUB, github_headers(event), payload).event


HEADERS = {
    "github/pull_request__synchronize.json": github_headers("pull_request"),
    "github/push__branch.json": github_headers("push"),
    "github/issue_comment__created.json": github_headers("issue_comment"),
    "github/check_run__requested_action.json": github_headers("check_run"),
    "github/check_suite__rerequested.json": github_headers("check_suite"),
    "github/installation__created.json": github_headers("installation"),
    "gitlab/merge_request__update-woodpecker.json": gitlab_headers("Merge Request Hook"),
    "gitlab/note__merge_request-go-gitlab.json": gitlab_headers("Note Hook"),
    "gitlab/push__woodpecker.json": gitlab_headers("Push Hook"),
    "gitea/pull_request__reopened.json": gitea_headers("pull_request"),
    "gitea/issue_comment__created-on-pr-go-scm-old.json": gitea_headers("issue_comment"),
    "gitea/push__branch-created.json": gitea_headers("push"),
}


@pytest.mark.parametrize("forge", list(ForgeKind))
@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{",
        b"\xff\xfe\x00garbage",
        b"[]",
        b"null",
        b'"a string"',
        b'{"number": NaN}',
        b'{"n": 1' + b"1" * 5000 + b"}",
        b"[" * 100_000,
        b"payload=%7B%7D",  # a hook left on application/x-www-form-urlencoded
    ],
)
def test_a_body_that_is_not_a_json_object_is_a_webhook_error(forge: ForgeKind, body: bytes) -> None:
    headers = {
        ForgeKind.GITHUB: github_headers("push"),
        ForgeKind.GITLAB: gitlab_headers("Push Hook"),
        ForgeKind.GITEA: gitea_headers("push"),
    }[forge]
    with pytest.raises(WebhookError, match="JSON"):
        parse_delivery(forge, headers, body)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "missing field pull_request.head.sha"),
        (42, "field pull_request.head.sha: expected a string, got number"),
        ("--upload-pack=touch /tmp/pwned", "field pull_request.head.sha: not a commit SHA"),
        ("ec26c3e", "not a commit SHA"),
    ],
)
def test_a_missing_or_bad_field_is_named_by_its_path(value: object, message: str) -> None:
    payload = fixture("github/pull_request__opened.json")
    payload["pull_request"]["head"]["sha"] = value
    with pytest.raises(WebhookError) as caught:
        github("pull_request", payload)
    assert message in str(caught.value)
    assert "pwned" not in str(caught.value)


def test_bad_refs_numbers_and_shapes_are_refused() -> None:
    cases: list[tuple[str, Any, str]] = [
        ("ref", "-x", "pull_request.head.ref: not a valid git ref name"),
        ("ref", "a..b", "not a valid git ref name"),
        ("ref", "x\x1b[31m", "not a valid git ref name"),
    ]
    for key, value, message in cases:
        payload = fixture("github/pull_request__opened.json")
        payload["pull_request"]["head"][key] = value
        with pytest.raises(WebhookError, match=message.replace("[", r"\[")):
            github("pull_request", payload)
    for number, message in ((True, "expected an integer, got boolean"), (0, "positive"), ("2", "")):
        payload = fixture("github/pull_request__opened.json")
        payload["pull_request"]["number"] = number
        with pytest.raises(WebhookError, match=f"pull_request.number.*{message}"):
            github("pull_request", payload)
    payload = fixture("github/pull_request__opened.json")
    payload["pull_request"] = [payload["pull_request"]]
    with pytest.raises(WebhookError, match="field pull_request: expected an object, got list"):
        github("pull_request", payload)


def test_gitlab_and_gitea_name_their_missing_fields_too() -> None:
    payload = fixture("gitlab/merge_request__open-woodpecker.json")
    del payload["object_attributes"]["last_commit"]["id"]
    with pytest.raises(WebhookError, match=r"missing field object_attributes\.last_commit\.id"):
        parse(ForgeKind.GITLAB, gitlab_headers("Merge Request Hook"), payload)
    payload = fixture("gitea/pull_request__opened.json")
    del payload["repository"]
    with pytest.raises(WebhookError, match="missing field repository"):
        parse(ForgeKind.GITEA, gitea_headers("pull_request"), payload)


READ_URLS = frozenset({"clone_url", "html_url", "web_url", "git_http_url", "http_url"})
HOSTILE: tuple[object, ...] = (None, "HOSTILE\n--x", -1, 0, True, [], {}, [1], 1.5)


def node_paths(value: object, depth: int = 0) -> list[tuple[Any, ...]]:
    """Every (key path) down to ``depth`` 4; a mutation at each must parse or be a WebhookError."""
    if depth == 4:
        return []
    if isinstance(value, dict):
        items: list[tuple[Any, object]] = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value[:2]))
    else:
        return []
    paths: list[tuple[Any, ...]] = []
    for key, child in items:
        if isinstance(key, str) and key.endswith("_url") and key not in READ_URLS:
            continue  # dozens of API links per payload that no mapping reads
        paths.append((key,))
        paths.extend((key, *rest) for rest in node_paths(child, depth + 1))
    return paths


@pytest.mark.parametrize(
    "name",
    [
        "github/pull_request__synchronize.json",
        "github/push__branch.json",
        "github/issue_comment__created.json",
        "github/check_run__requested_action.json",
        "github/check_suite__rerequested.json",
        "github/installation__created.json",
        "gitlab/merge_request__update-woodpecker.json",
        "gitlab/note__merge_request-go-gitlab.json",
        "gitlab/push__woodpecker.json",
        "gitea/pull_request__reopened.json",
        "gitea/issue_comment__created-on-pr-go-scm-old.json",
        "gitea/push__branch-created.json",
    ],
)
def test_no_mutation_crashes_the_parser(name: str) -> None:
    forge, headers, payload = ForgeKind(name.split("/")[0]), HEADERS[name], fixture(name)
    for path in node_paths(payload):
        parent = payload
        for key in path[:-1]:
            parent = parent[key]
        saved = parent[path[-1]]
        for hostile in HOSTILE:
            parent[path[-1]] = hostile
            try:
                parse(forge, headers, payload)
            except WebhookError as exc:
                assert "HOSTILE" not in str(exc)
        parent[path[-1]] = saved


def _with(name: str, path: list[str], value: object) -> dict[str, Any]:
    payload = fixture(name)
    node = payload
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return payload


NAMES = {
    "github/pull_request__synchronize.json": ["repository", "full_name"],
    "gitlab/merge_request__update-woodpecker.json": ["project", "path_with_namespace"],
    "gitea/pull_request__reopened.json": ["repository", "full_name"],
}


@pytest.mark.parametrize("name", sorted(NAMES))
@pytest.mark.parametrize("value", ["octo/../gitops", "../gitops", "octo/git%2F..%2Fops", "a/."])
def test_repository_names_that_leave_their_path_are_refused(name: str, value: str) -> None:
    forge = ForgeKind(name.split("/")[0])
    payload = _with(name, NAMES[name], value)
    with pytest.raises(WebhookError, match=r"\.(full_name|path_with_namespace): "):
        parse(forge, HEADERS[name], payload)


CLONE_URLS = {
    "github/pull_request__synchronize.json": ["repository", "clone_url"],
    "gitlab/merge_request__update-woodpecker.json": ["project", "git_http_url"],
    "gitea/pull_request__reopened.json": ["repository", "clone_url"],
}


WEB_URLS = {
    "github/pull_request__synchronize.json": ["repository", "html_url"],
    "gitlab/merge_request__update-woodpecker.json": ["project", "web_url"],
    "gitea/pull_request__reopened.json": ["repository", "html_url"],
}


@pytest.mark.parametrize("urls", [CLONE_URLS, WEB_URLS])
@pytest.mark.parametrize("name", sorted(CLONE_URLS))
def test_a_url_of_another_repository_is_refused(name: str, urls: dict[str, list[str]]) -> None:
    # The clone URL (or the page URL, cloned when there is none) is what gets fetched.
    forge = ForgeKind(name.split("/")[0])
    payload = _with(name, urls[name], "https://forge.example/evil/other.git")
    with pytest.raises(WebhookError, match="names another repository"):
        parse(forge, HEADERS[name], payload)


BRANCHES = {
    "github/pull_request__synchronize.json": ["pull_request", "head", "ref"],
    "gitlab/merge_request__update-woodpecker.json": ["object_attributes", "source_branch"],
    "gitea/pull_request__reopened.json": ["pull_request", "head", "ref"],
}


@pytest.mark.parametrize("name", sorted(BRANCHES))
@pytest.mark.parametrize("branch", ["a/.git/x", "x.lock", "a//b", "/x", "x/", "x."])
def test_branch_names_git_would_refuse_are_refused(name: str, branch: str) -> None:
    forge = ForgeKind(name.split("/")[0])
    with pytest.raises(WebhookError, match="not a valid git ref name"):
        parse(forge, HEADERS[name], _with(name, BRANCHES[name], branch))
