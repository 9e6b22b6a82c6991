"""Every recorded payload in ../shared/forge-data, parsed: the expected event, or knowingly Ignored.

Fixtures are byte-identical copies under fixtures/webhooks/ (see its README for provenance);
when ../shared is present the table is checked to cover every recorded file exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from bot.repos import ForgeKind
from bot.webhooks import (
    ChangeRequestEvent,
    CheckRerequestEvent,
    CommentEvent,
    Ignored,
    InstallationEvent,
    PingEvent,
    PushEvent,
    RequestedActionEvent,
    event_from_dict,
    event_to_dict,
    is_actionable,
    parse_delivery,
    verify_gitea,
    verify_github,
    verify_gitlab,
)
from tests.conftest import FIXTURES, SHARED, load_fixture
from tests.webhooks.helpers import gitea_headers, github_headers, gitlab_headers, hex_hmac, raw

FORGE_DATA = SHARED / "forge-data"
RECORDED_DIRS = ("github/webhooks", "github/webhooks-extra", "gitlab/webhooks", "gitea/webhooks")
ZERO = "0" * 40
SHA_GH_HEAD = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
SHA_GH_BASE = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"


@dataclass(frozen=True)
class Recorded:
    fixture: str  # under fixtures/webhooks/
    source: str  # under ../shared/forge-data/
    event: str  # the forge's event header
    kind: type[Any]
    expect: dict[str, Any]
    event_type: str | None = None  # Gitea's X-Gitea-Event-Type, when it differs

    @property
    def forge(self) -> ForgeKind:
        return ForgeKind(self.fixture.split("/")[0])


# fmt: off
def pr(number: int, action: str, head: str, base: str, ref: str, **rest: Any) -> dict[str, Any]:
    return {"number": number, "action": action, "head_sha": head, "base_ref": base,
            "head_ref": ref, **rest}


def ignored(reason: str, action: str | None = None) -> dict[str, Any]:
    return {"reason": reason, "action": action}


def repo(**fields: Any) -> dict[str, Any]:
    return {f"repo.{key}": value for key, value in fields.items()}


GH, XGH = "github/webhooks/", "github/webhooks-extra/"
GL, GT = "gitlab/webhooks/", "gitea/webhooks/"
CLOSED, MERGED = "closed pull requests are not checked", "merged pull requests are not checked"
MRH, NH = "Merge Request Hook", "Note Hook"
REVIEWS = "pull request reviews are not acted on"
RERUN = "only rerequested check runs are acted on"
RESUITE = "only rerequested check suites are acted on"
GL_OPEN_HEAD = "2f7670508b771e7e77839402be8b34b13787aba8"
GL_UPDATE_HEAD = "c136499ec574e1034b24c5d306de9acda3005367"
GL_OLDREV = "8b641937b7340066d882b9d8a8cc5b0573a207de"
# The same commit in a gitlab.com and a codeberg.org capture (one author testing both).
REOPEN_HEAD = "36b5813240a9d2daa29b05046d56a53e18f39a3e"

CASES = [
    # GitHub: @octokit/webhooks-examples 7.6.1, plus woodpecker and go-scm for the gaps
    Recorded("github/pull_request__opened.json", GH + "pull_request.opened.json", "pull_request",
             ChangeRequestEvent, pr(2, "opened", SHA_GH_HEAD, "master", "changes",
             base_sha=SHA_GH_BASE, before_sha=None, is_fork=False, author="Codertocat",
             installation_id=1, draft=False, head_repo_full_name="Codertocat/Hello-World",
             **repo(full_name="Codertocat/Hello-World", id="186853002", default_branch="master",
                    clone_url="https://github.com/Codertocat/Hello-World.git"))),
    Recorded("github/pull_request__reopened.json", GH + "pull_request.reopened.json",
             "pull_request", ChangeRequestEvent,
             pr(2, "reopened", SHA_GH_HEAD, "master", "changes")),
    Recorded("github/pull_request__synchronize.json", GH + "pull_request.synchronize.json",
             "pull_request", ChangeRequestEvent,
             pr(2, "updated", SHA_GH_HEAD, "master", "changes", before_sha=SHA_GH_BASE)),
    Recorded("github/pull_request__closed.json", GH + "pull_request.closed.json", "pull_request",
             Ignored, ignored(CLOSED, "closed")),
    Recorded("github/pull_request__closed-merged-woodpecker.json",
             XGH + "pull_request.closed.merged.woodpecker.json", "pull_request", Ignored,
             ignored(MERGED, "closed")),
    Recorded("github/push__branch.json", GH + "push.branch.json", "push", PushEvent,
             {"ref": "refs/heads/master", "before": ZERO, "created": True, "deleted": False,
              "after": "6113728f27ae82c7b1a177c8d03f9e96e0adf246", "pusher": "Codertocat",
              "installation_id": 1}),
    Recorded("github/push__tag-created.json", GH + "push.tag-created.json", "push", Ignored,
             ignored("tag pushes are not checked (the bot checks branches)")),
    Recorded("github/issue_comment__created.json", GH + "issue_comment.created.json",
             "issue_comment", CommentEvent,
             {"number": 1, "on_change_request": False, "comment_id": "492700400",
              "author": "Codertocat", "author_is_bot": False, "installation_id": 1,
              "body": "You are totally right! I'll get this fixed right away."}),
    Recorded("github/issue_comment__created-on-pr-go-scm.json",
             XGH + "issue_comment.created.on-pr.go-scm.json", "issue_comment", CommentEvent,
             {"number": 2, "on_change_request": True, "comment_id": "751955664",
              "author": "lts-def", "body": "trigger abc", "installation_id": None,
              **repo(full_name="abc/def-ci-webhook-test")}),
    Recorded("github/pull_request_review_comment__created.json",
             GH + "pull_request_review_comment.created.json", "pull_request_review_comment",
             CommentEvent, {"number": 2, "on_change_request": True, "comment_id": "284312630",
                            "body": "Maybe you should use more emoji on this line."}),
    Recorded("github/check_run__rerequested.json", GH + "check_run.rerequested.json",
             "check_run", CheckRerequestEvent,
             {"head_sha": "d6fde92930d4715a2b49857d24b940956b26d2d3", "check_run_id": 4,
              "check_suite_id": 5, "pull_numbers": (), "installation_id": 1,
              **repo(full_name="github/hello-world")}),
    Recorded("github/check_run__requested_action.json", GH + "check_run.requested_action.json",
             "check_run", RequestedActionEvent,
             {"head_sha": "5bd5f196a46b8222fb7484f05faba41a73cf34bd", "identifier": "lgtm|26764",
              "check_run_id": 1494503112, "installation_id": 690857}),
    Recorded("github/check_run__created.json", GH + "check_run.created.json", "check_run",
             Ignored, ignored(RERUN, "created")),
    Recorded("github/check_run__completed.json", GH + "check_run.completed.json", "check_run",
             Ignored, ignored(RERUN, "completed")),
    Recorded("github/check_suite__rerequested.json", GH + "check_suite.rerequested.json",
             "check_suite", CheckRerequestEvent,
             {"head_sha": SHA_GH_HEAD, "check_run_id": None, "check_suite_id": 118578147,
              "pull_numbers": (2,), "installation_id": 957387}),
    Recorded("github/check_suite__requested.json", GH + "check_suite.requested.json",
             "check_suite", Ignored, ignored(RESUITE, "requested")),
    Recorded("github/check_suite__completed.json", GH + "check_suite.completed.json",
             "check_suite", Ignored, ignored(RESUITE, "completed")),
    Recorded("github/installation__created.json", GH + "installation.created.json",
             "installation", InstallationEvent,
             {"action": "created", "installation_id": 957387, "account": "Codertocat",
              "repositories": ("Codertocat/Hello-World",), "removed": ()}),
    Recorded("github/installation__deleted.json", GH + "installation.deleted.json",
             "installation", InstallationEvent,
             {"action": "deleted", "installation_id": 2, "account": "octocat",
              "repositories": ("octocat/Hello-World",)}),
    Recorded("github/installation_repositories__added.json",
             GH + "installation_repositories.added.json", "installation_repositories",
             InstallationEvent, {"action": "added", "installation_id": 957387,
                                 "repositories": ("Codertocat/Space",), "removed": ()}),
    Recorded("github/ping__repository.json", GH + "ping.json", "ping", PingEvent,
             {"hook_id": 109948940, "forge": ForgeKind.GITHUB}),
    # GitLab: woodpecker captures (GitLab 18.3), go-gitlab doc examples, go-scm captures
    Recorded("gitlab/merge_request__open-woodpecker.json",
             GL + "merge_request.open.woodpecker.json", MRH, ChangeRequestEvent,
             pr(3, "opened", GL_OPEN_HEAD, "main", "real6543-main-patch-42541", base_sha=None,
                before_sha=None, is_fork=False, author="real6543", installation_id=None,
                draft=False, **repo(full_name="demoaccount2-commits-group/test_ci_tmp",
                                    id="72081820", default_branch="main"))),
    Recorded("gitlab/merge_request__open-go-gitlab.json", GL + "merge_request.go-gitlab.json",
             MRH, ChangeRequestEvent,
             pr(1, "opened", "da1560886d4f094c3e6c9ef40349f7d38b5d27d7", "master", "ms-viewport",
                head_repo_full_name="awesome_space/awesome_project", is_fork=False,
                **repo(full_name="gitlabhq/gitlab-test"))),
    Recorded("gitlab/merge_request__reopen-woodpecker.json",
             GL + "merge_request.reopen.woodpecker.json", MRH, ChangeRequestEvent,
             pr(1, "reopened", REOPEN_HEAD, "main", "6543-patch-1")),
    Recorded("gitlab/merge_request__update-woodpecker.json",
             GL + "merge_request.update.woodpecker.json", MRH, ChangeRequestEvent,
             pr(3, "updated", GL_UPDATE_HEAD, "main", "anbraten-main-patch-05373",
                before_sha=GL_OLDREV, author="anbraten")),
    Recorded("gitlab/merge_request__close-woodpecker.json",
             GL + "merge_request.close.woodpecker.json", MRH, Ignored,
             ignored("closed merge requests are not checked", "close")),
    Recorded("gitlab/merge_request__merge-woodpecker.json",
             GL + "merge_request.merge.woodpecker.json", MRH, Ignored,
             ignored("merged merge requests are not checked", "merge")),
    Recorded("gitlab/merge_request__approved-woodpecker.json",
             GL + "merge_request.approved.woodpecker.json", MRH, Ignored,
             ignored("approvals do not need a check", "approved")),
    Recorded("gitlab/push__woodpecker.json", GL + "push.woodpecker.json", "Push Hook", PushEvent,
             {"ref": "refs/heads/main", "before": "ffe8eb4f91d1fe6bc49f1e610e50e4b5767f0104",
              "after": "16862e368d8ab812e48833b741dad720d6e2cb7f", "created": False,
              "deleted": False, "pusher": "test",
              **repo(full_name="test/woodpecker", default_branch="develop")}),
    Recorded("gitlab/push__go-gitlab.json", GL + "push.go-gitlab.json", "Push Hook", PushEvent,
             {"ref": "refs/heads/master", "before": "95790bf891e76fee5e1747ab589903a6a1f80f22",
              "after": "da1560886d4f094c3e6c9ef40349f7d38b5d27d7", "pusher": "jsmith",
              **repo(full_name="mike/diaspora", id="15")}),
    Recorded("gitlab/note__merge_request-go-gitlab.json",
             GL + "note_merge_request.go-gitlab.json", NH, CommentEvent,
             {"number": 1, "on_change_request": True, "comment_id": "1244", "author": "root",
              "body": "This MR needs work."}),
    Recorded("gitlab/note__merge_request-go-scm.json", GL + "note.merge_request.go-scm.json",
             NH, CommentEvent,
             {"number": 1, "on_change_request": True, "comment_id": "50772616", "body": "lgtm",
              "author": "sytses", **repo(full_name="gitlab-org/hello-world")}),
    Recorded("gitlab/note__diffnote-go-scm.json", GL + "note.diffnote-with-position.go-scm.json",
             NH, CommentEvent, {"number": 1, "on_change_request": True,
                                "comment_id": "50772639", "body": "check spelling"}),
    Recorded("gitlab/note__commit-go-gitlab.json", GL + "note_commit.go-gitlab.json", NH,
             CommentEvent, {"number": None, "on_change_request": False, "comment_id": "1243",
                            "author": "user1"}),
    # Gitea: woodpecker captures (gitea.com, codeberg.org, local) and go-scm old-Gitea captures
    Recorded("gitea/pull_request__opened.json", GT + "pull_request.opened.json", "pull_request",
             ChangeRequestEvent,
             pr(1, "opened", "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c", "main", "feature/changes",
                base_sha="9353195a19e45482665306e466c832c46560532d", author="gordon",
                # a trimmed capture: no head.repo and no repo ids, so it counts as a fork
                head_repo_full_name=None, is_fork=True,
                **repo(full_name="gordon/hello-world",
                       clone_url="https://gitea.golang.org/gordon/hello-world.git"))),
    Recorded("gitea/pull_request__reopened.json", GT + "pull_request.reopened.json",
             "pull_request", ChangeRequestEvent,
             pr(1, "reopened", REOPEN_HEAD, "main", "6543-patch-1",
                head_repo_full_name="test_it/test_ci_thing", is_fork=False, draft=False,
                **repo(web_url="https://codeberg.org/test_it/test_ci_thing"))),
    Recorded("gitea/pull_request__synchronized.json", GT + "pull_request.synchronized.json",
             "pull_request", ChangeRequestEvent,
             pr(2, "updated", "788ed8d02d3b7fcfcf6386dbcbca696aa1d4dc25", "main", "test-patch-1",
                base_sha="29be01c073851cf0db0c6a466e396b725a670453", before_sha=None,
                head_repo_full_name=None, is_fork=False, author="test"),
             event_type="pull_request_sync"),
    Recorded("gitea/pull_request__closed.json", GT + "pull_request.closed.json", "pull_request",
             Ignored, ignored(CLOSED, "closed")),
    Recorded("gitea/pull_request__closed-merged.json", GT + "pull_request.closed.merged.json",
             "pull_request", Ignored, ignored(MERGED, "closed")),
    Recorded("gitea/pull_request_review_approved__reviewed.json",
             GT + "pull_request_review_approved.reviewed.json", "pull_request_approved",
             Ignored, ignored(REVIEWS, "reviewed"), event_type="pull_request_review_approved"),
    Recorded("gitea/pull_request_review_comment__reviewed.json",
             GT + "pull_request_review_comment.reviewed.json", "pull_request_comment",
             Ignored, ignored(REVIEWS, "reviewed"), event_type="pull_request_review_comment"),
    Recorded("gitea/push__branch.json", GT + "push.json", "push", PushEvent,
             {"ref": "refs/heads/main", "before": "4b2626259b5a97b6b4eab5e6cca66adb986b672b",
              "after": "ef98532add3b2feb7a137426bba1248724367df5", "created": False,
              "deleted": False, "pusher": "gordon", **repo(default_branch=None)}),
    Recorded("gitea/push__branch-created.json", GT + "push.branch-created.json", "push",
             PushEvent, {"ref": "refs/heads/fdsafdsa", "before": ZERO, "created": True,
                         "after": "28c3613ae62640216bea5e7dc71aa65356e4298b", "pusher": "6543"}),
    Recorded("gitea/issue_comment__created-go-scm-old.json",
             GT + "issue_comment.created.go-scm-old.json", "issue_comment", CommentEvent,
             {"number": 1, "on_change_request": False, "comment_id": "43", "author": "unknwon"}),
    Recorded("gitea/issue_comment__created-on-pr-go-scm-old.json",
             GT + "issue_comment.created.on-pr.go-scm-old.json", "issue_comment", CommentEvent,
             {"number": 2, "on_change_request": True, "comment_id": "45", "body": "run gofmt"},
             event_type="pull_request_comment"),
]
# fmt: on


def headers_for(case: Recorded, delivery: str) -> dict[str, str]:
    if case.forge is ForgeKind.GITHUB:
        return github_headers(case.event, delivery)
    if case.forge is ForgeKind.GITLAB:
        return gitlab_headers(case.event, idempotency_key=delivery)
    return gitea_headers(case.event, case.event_type, delivery)


def attribute(obj: object, dotted: str) -> object:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("case", CASES, ids=[case.fixture for case in CASES])
def test_recorded_payload_parses_to_its_event(case: Recorded) -> None:
    delivery_id = f"delivery-{CASES.index(case)}"
    delivery = parse_delivery(case.forge, headers_for(case, delivery_id), raw(case.fixture))
    assert (delivery.forge, delivery.flavor) == (case.forge, case.forge.value)
    assert delivery.event_name == case.event
    assert delivery.delivery_id == delivery_id
    assert type(delivery.event) is case.kind
    for dotted, expected in case.expect.items():
        assert attribute(delivery.event, dotted) == expected, dotted
    if isinstance(delivery.event, Ignored):
        assert delivery.event.reason and not is_actionable(delivery.event)
    else:
        assert is_actionable(delivery.event) is not isinstance(delivery.event, PingEvent)
    if hasattr(delivery.event, "repo"):
        assert attribute(delivery.event, "repo.forge") is case.forge
    assert event_from_dict(event_to_dict(delivery.event)) == delivery.event


@pytest.mark.parametrize("case", CASES, ids=[case.fixture for case in CASES])
def test_recorded_payload_verifies_when_signed(case: Recorded) -> None:
    body, secret = raw(case.fixture), "rotated-in"
    if case.forge is ForgeKind.GITHUB:
        headers = {"x-hub-signature-256": "sha256=" + hex_hmac(secret, body)}
        assert verify_github(body, headers, ["old", secret]).ok
    elif case.forge is ForgeKind.GITEA:
        assert verify_gitea(body, {"x-gitea-signature": hex_hmac(secret, body)}, [secret]).ok
    else:
        assert verify_gitlab(body, {"x-gitlab-token": secret}, ["old", secret]).ok


def test_fixture_loader_reads_the_copies() -> None:
    assert load_fixture("webhooks/github/pull_request__opened.json")["number"] == 2


def test_every_fixture_is_in_the_table() -> None:
    on_disk = {
        path.relative_to(FIXTURES / "webhooks").as_posix()
        for path in (FIXTURES / "webhooks").rglob("*.json")
    }
    assert on_disk == {case.fixture for case in CASES}


@pytest.mark.needs_shared
def test_table_covers_every_recorded_payload_byte_for_byte() -> None:
    recorded = {
        path.relative_to(FORGE_DATA).as_posix()
        for folder in RECORDED_DIRS
        for path in (FORGE_DATA / folder).glob("*.json")
    }
    assert recorded == {case.source for case in CASES}
    for case in CASES:
        assert raw(case.fixture) == (FORGE_DATA / case.source).read_bytes(), case.fixture
