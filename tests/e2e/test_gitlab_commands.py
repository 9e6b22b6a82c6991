"""End to end on GitLab, comment commands (design.md 5, 5.1): a ``Note Hook`` on a merge request →
``ichor-bot serve`` → Redis → a real ``ichor-bot worker`` → the fake GitLab, which serves the
notes, award emoji and member look-ups the commands need. The repository and its members are
:class:`tests.e2e.gitlab_commands.CommandScenario`'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.approvals.marker import read_approval
from tests.e2e.gitlab_commands import (
    APPROVED_BY,
    AUTHOR,
    MAINTAINER,
    MARKER,
    READER,
    TWO_NEW,
    WAITING_TWO,
    CommandScenario,
    forget_commands_state,
)
from tests.e2e.harness import Bot, running_bot
from tests.fakeforge.gitlab import FakeGitLab
from tests.support.gitops import configmap
from tests.support.redis_server import RedisServer


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running
        forget_commands_state(running)


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeGitLab]:
    with FakeGitLab(tmp_path / "forge-git") as running:
        yield running


@pytest.fixture
def scenario(fake: FakeGitLab, bot: Bot, tmp_path: Path) -> Iterator[CommandScenario]:
    running = CommandScenario(fake, bot, tmp_path)
    yield running
    running.finish()


def test_help_replies_once_with_the_targets_and_reacts(scenario: CommandScenario) -> None:
    scenario.open(21, {"clusters/staging/v1/configmaps/web/extra.yaml": configmap("extra")})
    note = scenario.comment(21, "/help", READER)
    mr = scenario.mr(21)
    assert scenario.fake.calls_summary() == [
        "GET /api/v4/user 200",
        f"GET {mr} 200",
        f"POST {mr}/notes/{note['id']}/award_emoji 201",
        f"POST {mr}/notes 201",
    ]
    (reply,) = scenario.replies(21, note["id"])
    assert "**Targets**: `prod` (strict), `staging` (relaxed)." in reply["body"]
    assert "| `/approve` | `write`, not the PR author |" in reply["body"]
    assert scenario.awards(21, note) == ["eyes"]


def test_recheck_posts_a_new_result_for_the_head(scenario: CommandScenario) -> None:
    head = scenario.open(22, {"clusters/staging/v1/configmaps/web/extra.yaml": configmap("extra")})
    assert scenario.states(head) == ["created", "pending", "running", "success"]
    (summary,) = scenario.summary(22)
    note = scenario.comment(22, "/recheck", READER)
    mr = scenario.mr(22)
    assert scenario.fake.calls_summary() == [
        "GET /api/v4/user 200",
        f"GET {mr} 200",
        f"POST {mr}/notes/{note['id']}/award_emoji 201",
        "GET /api/v4/users 200",
        f"GET {scenario.api}/members/all/{scenario.ids[READER]} 200",
        f"POST {scenario.api}/statuses/{head} 201",  # running: a new status for the head
        f"GET {mr}/notes 200",  # the summary, unchanged: not edited
        f"POST {scenario.api}/statuses/{head} 201",
    ]
    assert scenario.summary(22) == [summary]
    statuses = scenario.fake.statuses(scenario.full_name, head)
    assert [s["history"][-1] for s in statuses] == ["success", "success"]
    assert scenario.replies(22, note["id"]) == []  # nothing to read: no reply
    assert scenario.awards(22, note) == ["eyes"]


def test_strict_objects_wait_for_a_maintainers_approve(scenario: CommandScenario) -> None:
    head = scenario.open(23, TWO_NEW)
    status = scenario.status(head)
    assert (status["status"], status["description"]) == ("failed", WAITING_TWO)
    (summary,) = scenario.summary(23)
    assert summary["body"].count("waiting for `/approve`") == 2
    before = scenario.status_count(head)

    mine = scenario.comment(23, "/approve", AUTHOR)
    mr = scenario.mr(23)
    assert scenario.fake.calls_summary() == [
        "GET /api/v4/user 200",
        f"GET {mr} 200",
        f"POST {mr}/notes/{mine['id']}/award_emoji 201",
        "GET /api/v4/users 200",
        f"GET {scenario.api}/members/all/{scenario.ids[AUTHOR]} 200",
        f"POST {mr}/notes 201",
    ]
    (refusal,) = scenario.replies(23, mine["id"])
    assert "cannot approve its own new objects" in refusal["body"]
    assert not MARKER.search(refusal["body"])
    assert scenario.status_count(head) == before
    assert scenario.approvals(23) == ()

    theirs = scenario.comment(23, "/approve", MAINTAINER)
    status = scenario.status(head)
    assert status["status"] == "success"
    (reply,) = scenario.replies(23, theirs["id"])
    assert reply["body"].startswith("@maintainer approved 2 new objects of strict targets")
    marker = MARKER.search(reply["body"])
    assert marker is not None
    recorded = read_approval(marker.group(1))
    assert recorded is not None
    assert (recorded.approver, recorded.head_sha, recorded.source) == (
        MAINTAINER,
        head,
        str(theirs["id"]),
    )
    assert sorted(f.identity for f in recorded.fingerprints) == [
        "ConfigMap web/alpha",
        "ConfigMap web/beta",
    ]
    assert scenario.approvals(23) == (recorded,)
    (summary,) = scenario.summary(23)
    assert summary["body"].count(APPROVED_BY) == 2
    assert scenario.awards(23, theirs) == ["eyes"]


def _approved(scenario: CommandScenario, iid: int, command: str = "/approve") -> str:
    head = scenario.open(iid, TWO_NEW)
    scenario.comment(iid, command, MAINTAINER)
    assert scenario.status(head)["status"] == "success"
    return head


def test_a_later_push_keeps_the_approval_of_unchanged_objects(scenario: CommandScenario) -> None:
    _approved(scenario, 24, "/ichor approve")  # GitLab runs its own /approve quick action
    readme = scenario.push(24, {"README.md": "hello again\n"})
    status = scenario.status(readme)
    assert status["status"] == "success"
    new_notes = f"POST {scenario.mr(24)}/notes 201"
    assert new_notes not in scenario.fake.calls_summary()  # no reply, no new summary
    (summary,) = scenario.summary(24)
    assert summary["body"].count(APPROVED_BY) == 2

    beta = configmap("beta").replace("mode: prod", "mode: beta")
    changed = scenario.push(24, {"clusters/prod/v1/configmaps/web/beta.yaml": beta})
    status = scenario.status(changed)
    assert (status["status"], status["description"]) == (
        "failed",
        "1 new object in prod waits for /approve",
    )
    (summary,) = scenario.summary(24)
    assert summary["body"].count("waiting for `/approve`") == 1
    assert summary["body"].count(APPROVED_BY) == 1


def test_approve_cancel_makes_it_wait_again(scenario: CommandScenario) -> None:
    head = _approved(scenario, 25)
    note = scenario.comment(25, "/approve cancel", MAINTAINER)
    status = scenario.status(head)
    assert (status["status"], status["description"]) == ("failed", WAITING_TWO)
    (reply,) = scenario.replies(25, note["id"])
    assert "withdrew their approval" in reply["body"]
    assert "ichor:approval-cancel v1" in reply["body"]
    assert scenario.approvals(25) == ()


def test_below_min_permission_is_refused_with_one_reply(scenario: CommandScenario) -> None:
    head = scenario.open(26, TWO_NEW)
    before = scenario.status_count(head)
    note = scenario.comment(26, "/approve", READER)
    mr = scenario.mr(26)
    assert scenario.fake.calls_summary() == [
        "GET /api/v4/user 200",
        f"GET {mr} 200",
        f"POST {mr}/notes/{note['id']}/award_emoji 201",
        "GET /api/v4/users 200",
        f"GET {scenario.api}/members/all/{scenario.ids[READER]} 200",
        f"POST {mr}/notes 201",
    ]
    (reply,) = scenario.replies(26, note["id"])
    assert "it needs `write` permission on this repository, and @reader has `read`" in reply["body"]
    assert scenario.status_count(head) == before
    assert scenario.status(head)["description"] == WAITING_TWO


@pytest.mark.parametrize("status", [502, 403])
def test_a_failed_permission_lookup_refuses(scenario: CommandScenario, status: int) -> None:
    head = scenario.open(27, TWO_NEW)
    before = scenario.status_count(head)
    scenario.fake.fail_member_lookups(status)  # every attempt
    note = scenario.comment(27, "/approve", MAINTAINER)
    lookups = [c for c in scenario.fake.calls_summary() if "/members/all/" in c]
    assert lookups == [f"GET {scenario.api}/members/all/{scenario.ids[MAINTAINER]} {status}"] * (
        5 if status >= 500 else 1
    )
    (reply,) = scenario.replies(27, note["id"])
    assert "the permission of @maintainer on this repository could not be checked" in reply["body"]
    assert scenario.status_count(head) == before
    assert scenario.status(head)["description"] == WAITING_TWO
    assert not MARKER.search(reply["body"])
    assert scenario.approvals(27) == ()


def test_edits_quotes_and_the_bots_own_comments_do_nothing(scenario: CommandScenario) -> None:
    head = scenario.open(28, TWO_NEW)
    before = scenario.status_count(head)
    edited = scenario.fake.add_note(scenario.full_name, 28, "needs work", author=MAINTAINER)
    edited = scenario.fake.edit_note(scenario.full_name, 28, edited["id"], "/approve")
    own = scenario.fake.add_note(
        scenario.full_name, 28, "/approve", author=scenario.fake.bot_username
    )
    quoted = scenario.fake.add_note(
        scenario.full_name, 28, "> /approve\n\nwhy was this approved?", author=MAINTAINER
    )
    scenario.fake.reset_calls()
    assert scenario.hook(28, edited, MAINTAINER, action="update") == 200  # ignored at once
    assert scenario.hook(28, own, scenario.fake.bot_username) == 202
    assert scenario.hook(28, quoted, MAINTAINER) == 202
    scenario.work_once()
    assert scenario.fake.calls_summary() == []
    for note in (edited, own, quoted):
        assert scenario.awards(28, note) == []
    assert scenario.replies(28, quoted["id"]) == []
    assert scenario.status_count(head) == before


def test_the_bots_own_comment_under_a_plain_username_does_nothing(bot: Bot, tmp_path: Path) -> None:
    """A personal access token of an account whose name looks like anyone's: the hook cannot
    tell it is the bot, so the job asks GitLab who it is, and stops there."""
    with FakeGitLab(tmp_path / "forge-git", bot_username="gitops-guard") as fake:
        scenario = CommandScenario(fake, bot, tmp_path / "scenario")
        head = scenario.open(30, TWO_NEW)
        before = scenario.status_count(head)
        own = fake.add_note(scenario.full_name, 30, "/approve", author=fake.bot_username)
        fake.reset_calls()
        assert scenario.hook(30, own, fake.bot_username) == 202
        scenario.work_once()
        assert fake.calls_summary() == ["GET /api/v4/user 200"]
        assert scenario.awards(30, own) == []
        assert scenario.replies(30, own["id"]) == []
        assert scenario.status_count(head) == before
        scenario.finish()


def test_approvals_lost_by_redis_are_rebuilt_from_the_reply(
    fake: FakeGitLab, tmp_path: Path
) -> None:
    with RedisServer(tmp_path / "redis", persistent=False) as server:
        (tmp_path / "own-bot").mkdir()
        with running_bot(tmp_path / "own-bot", server.url) as own:
            scenario = CommandScenario(fake, own, tmp_path / "scenario")
            head = _approved(scenario, 29)
            client = redis.Redis.from_url(server.url)
            try:
                assert list(client.scan_iter("ichor:approvals:*"))
                client.flushall()
            finally:
                client.close()
            after = scenario.push(29, {"README.md": "hello again\n"})
            assert after != head
            status = scenario.status(after)
            assert status["status"] == "success"
            mr = scenario.mr(29)
            # The store had nothing: the approval came back from the bot's reply.
            assert f"GET {mr}/notes 200" in scenario.fake.calls_summary()
            (summary,) = scenario.summary(29)
            assert summary["body"].count(APPROVED_BY) == 2
            (reply,) = [n for n in scenario.replies(29, 0) if MARKER.search(n["body"])]
            (restored,) = scenario.approvals(29) or ()  # and it is in the store again
            assert (restored.approver, restored.head_sha) == (MAINTAINER, head)
            assert restored.reply is not None and restored.reply.endswith(f"#note_{reply['id']}")
            scenario.finish()
