"""An ``/approve`` covers only what its author could have seen (design.md 5.1), on every forge.

A maintainer reads the check that lists the new objects and comments ``/approve``; before the
job runs, the pull request's author pushes one more object. The job reads the head as it is
then, but approves only the objects a check published before the comment showed waiting: the
late object stays pending and the reply names it. Once a check lists it, a new ``/approve``
covers it. Real ``ichor-bot serve`` and ``worker`` processes, one fake forge per test.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import pytest
import redis

from tests.e2e import gitlab_commands as gitlab_e2e
from tests.e2e import test_gitea_commands as gitea_e2e
from tests.e2e import test_github_commands as github_e2e
from tests.e2e.gitlab_commands import CommandScenario
from tests.e2e.harness import Bot, running_bot
from tests.fakeforge import FakeGitHub
from tests.fakeforge.gitea import FakeGitea
from tests.fakeforge.gitlab import FakeGitLab
from tests.support.gitops import configmap
from tests.support.redis_server import RedisServer

Files = Mapping[str, str | None]
WEB = "clusters/prod/v1/configmaps/web"
TWO = {f"{WEB}/a.yaml": configmap("a"), f"{WEB}/b.yaml": configmap("b")}
LATE = {f"{WEB}/late.yaml": configmap("late")}
WAIT_2 = "2 new objects in prod wait for /approve"
WAIT_1 = "1 new object in prod waits for /approve"


class Forge(Protocol):
    """One strict pull request on one forge, driven the same way on each."""

    def open(self, files: Files) -> None:
        """Open it with ``files`` and let the bot check it."""

    def push(self, files: Files) -> None:
        """A new head, delivered, not yet worked on."""

    def comment(self, body: str) -> None:
        """The maintainer comments, delivered, not yet worked on."""

    def work(self) -> None: ...

    def waiting(self) -> str:
        """What the newest verdict on the head says (title or status description)."""

    def replies(self) -> list[str]: ...


class OnGitHub:
    def __init__(self, fake: FakeGitHub, bot: Bot, tmp_path: Path) -> None:
        self.pr = github_e2e.Commands(fake, bot, tmp_path)

    def open(self, files: Files) -> None:
        self.pr.push(dict(files))

    def push(self, files: Files) -> None:
        self.pr.push(dict(files), check=False)

    def comment(self, body: str) -> None:
        self.pr.comment(body, user=github_e2e.MAINTAINER)

    def work(self) -> None:
        self.pr.work_once()

    def waiting(self) -> str:
        return self.pr.verdict()[1]

    def replies(self) -> list[str]:
        return self.pr.replies()


class OnGitLab:
    IID = 31

    def __init__(self, fake: FakeGitLab, bot: Bot, tmp_path: Path) -> None:
        self.scenario = CommandScenario(fake, bot, tmp_path)

    def open(self, files: Files) -> None:
        self.scenario.open(self.IID, files)

    def push(self, files: Files) -> None:
        s = self.scenario
        s.deliver(s.merge_request(self.IID, s.work.commit(files), s.heads[self.IID]))

    def comment(self, body: str) -> None:
        s = self.scenario
        note = s.fake.add_note(s.full_name, self.IID, body, author=gitlab_e2e.MAINTAINER)
        assert s.hook(self.IID, note, gitlab_e2e.MAINTAINER) == 202

    def work(self) -> None:
        self.scenario.work_once()

    def waiting(self) -> str:
        s = self.scenario
        return str(s.status(s.heads[self.IID])["description"])

    def replies(self) -> list[str]:
        return [n["body"] for n in self.scenario.replies(self.IID, 0)]


class OnGitea:
    NUMBER = 31

    def __init__(self, fake: FakeGitea, bot: Bot, tmp_path: Path) -> None:
        self.commands = gitea_e2e.Commands(fake, bot, tmp_path)
        self.head = ""

    def open(self, files: Files) -> None:
        self.head = self.commands.open_pull(self.NUMBER, files)

    def push(self, files: Files) -> None:
        self.head = self.commands.push(self.NUMBER, files)

    def comment(self, body: str) -> None:
        self.commands.comment(self.NUMBER, body, user=gitea_e2e.MAINTAINER)

    def work(self) -> None:
        self.commands.work_once()

    def waiting(self) -> str:
        return str(self.commands.last_status(self.head)["description"])

    def replies(self) -> list[str]:
        return [c["body"] for c in self.commands.replies(self.NUMBER)]


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


@pytest.fixture(params=["github", "gitlab", "gitea"])
def forge(request: pytest.FixtureRequest, bot: Bot, tmp_path: Path) -> Iterator[Forge]:
    driver: Any
    if request.param == "github":
        with FakeGitHub(tmp_path / "forge-git") as github:
            yield OnGitHub(github, bot, tmp_path)
            assert github.response_errors == [] and github.validation_errors == []
    elif request.param == "gitlab":
        with FakeGitLab(tmp_path / "forge-git") as gitlab:
            driver = OnGitLab(gitlab, bot, tmp_path)
            yield driver
            driver.scenario.finish()
    else:
        with FakeGitea(tmp_path / "forge-git", flavor="gitea") as gitea:
            yield OnGitea(gitea, bot, tmp_path)
            gitea.assert_clean()


def test_an_approve_covers_only_what_a_check_showed_before_it(forge: Forge) -> None:
    forge.open(TWO)
    assert forge.waiting() == WAIT_2
    forge.comment("/approve")  # written after reading the check that lists a and b
    forge.push(LATE)  # the author adds an object before the job runs
    forge.work()
    assert forge.waiting() == WAIT_1
    reply = forge.replies()[-1]
    approved, _, not_covered = reply.partition("not covered by this approval")
    assert "approved 2 new objects" in approved and "web/late" not in approved
    assert "web/late" in not_covered
    # Once a check lists it, an /approve written after that check covers it.
    forge.comment("/approve")
    forge.work()
    assert forge.waiting() != WAIT_1
    last = forge.replies()[-1]
    assert "approved 3 new objects" in last and "not covered" not in last


def test_a_comment_written_before_any_check_approves_nothing(forge: Forge) -> None:
    forge.open({"README.md": "nothing strict yet\n"})
    forge.comment("/approve")
    forge.push(TWO)  # both objects arrive after the comment
    forge.work()
    assert forge.waiting() == WAIT_2
    assert "changed nothing" in forge.replies()[-1]


def test_the_approve_button_covers_what_its_own_check_run_showed(tmp_path: Path, bot: Bot) -> None:
    with FakeGitHub(tmp_path / "forge-git") as fake:
        pr = github_e2e.Commands(fake, bot, tmp_path)
        pr.push(dict(TWO))
        first = pr.check_runs()[-1]
        assert first["output"]["title"] == WAIT_2
        pr.push(dict(LATE), check=False)
        pr.press("approve", run=first)  # on the check that showed a and b only
        pr.work_once()
        assert pr.verdict() == ("action_required", WAIT_1)
        assert "web/late" in pr.replies()[-1]
        pr.assert_clean()


def test_with_no_record_of_the_checks_nothing_is_approved_until_one_is_shown(
    tmp_path: Path,
) -> None:
    """Redis lost what the checks showed: the bot cannot tell what the comment was written
    about, so it approves nothing, says why and checks again; an /approve after that works."""
    (tmp_path / "bot").mkdir()
    with (
        RedisServer(tmp_path / "redis", persistent=False) as own,
        running_bot(tmp_path / "bot", own.url) as bot,
        FakeGitHub(tmp_path / "forge-git") as fake,
    ):
        pr = github_e2e.Commands(fake, bot, tmp_path)
        pr.push(dict(TWO))
        connection = redis.Redis.from_url(own.url)
        connection.flushall()
        connection.close()
        pr.comment("/approve")
        pr.work_once()
        assert "no record of what its checks on this pull request showed" in pr.replies()[-1]
        assert pr.verdict() == ("action_required", WAIT_2)  # checked again, and recorded
        pr.comment("/approve")
        pr.work_once()
        assert pr.verdict()[0] == "success"
        pr.assert_clean()
