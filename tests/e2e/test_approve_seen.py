"""An ``/approve`` covers only what its author could have seen (design.md 5.1), on every forge.

A maintainer reads the check that lists the new objects and comments ``/approve``; before the
job runs, the pull request's author pushes one more object. The job reads the head as it is
then, but approves only the objects a check published before the comment showed waiting: the
late object stays pending and the reply names it. Once a check lists it, a new ``/approve``
covers it. Real ``ichor-bot serve`` and ``worker`` processes, one fake forge per test
(:mod:`tests.e2e.drivers`).
"""

from __future__ import annotations

from pathlib import Path

import redis

from tests.e2e.drivers import Files, Forge, GitHub, open_forge
from tests.e2e.harness import running_bot
from tests.e2e.test_commands import STRICT
from tests.support.gitops import configmap
from tests.support.redis_server import RedisServer

WEB = "clusters/prod/v1/configmaps/web"
TWO = {f"{WEB}/a.yaml": configmap("a"), f"{WEB}/b.yaml": configmap("b")}
LATE = {f"{WEB}/late.yaml": configmap("late")}
WAIT_2 = "2 new objects in prod wait for /approve"
WAIT_1 = "1 new object in prod waits for /approve"


def waiting(forge: Forge) -> str:
    """What the newest verdict on the head says (title or status description)."""
    return forge.verdict()[1]


def late_push(forge: Forge, files: Files) -> None:
    """A new head, delivered, not yet worked on."""
    forge.push(files, check=False)


def test_an_approve_covers_only_what_a_check_showed_before_it(forge: Forge) -> None:
    forge.open(TWO, STRICT)
    assert waiting(forge) == WAIT_2
    forge.comment("/approve")  # written after reading the check that lists a and b
    late_push(forge, LATE)  # the author adds an object before the job runs
    forge.work()
    assert waiting(forge) == WAIT_1
    reply = forge.replies()[-1]
    approved, _, not_covered = reply.partition("not covered by this approval")
    assert "approved 2 new objects" in approved and "web/late" not in approved
    assert "web/late" in not_covered
    # Once a check lists it, an /approve written after that check covers it.
    forge.comment("/approve")
    forge.work()
    assert waiting(forge) != WAIT_1
    last = forge.replies()[-1]
    assert "approved 3 new objects" in last and "not covered" not in last


def test_a_comment_written_before_any_check_approves_nothing(forge: Forge) -> None:
    forge.open({"README.md": "nothing strict yet\n"}, STRICT)
    forge.comment("/approve")
    late_push(forge, TWO)  # both objects arrive after the comment
    forge.work()
    assert waiting(forge) == WAIT_2
    assert "changed nothing" in forge.replies()[-1]


def test_the_approve_button_covers_what_its_own_check_run_showed(github: GitHub) -> None:
    github.open(TWO, STRICT)
    first = github.check_runs()[-1]
    assert first["output"]["title"] == WAIT_2
    late_push(github, LATE)
    github.press("approve", run=first)  # on the check that showed a and b only
    github.work()
    assert github.verdict() == ("action_required", WAIT_1)
    assert "web/late" in github.replies()[-1]


def test_with_no_record_of_the_checks_nothing_is_approved_until_one_is_shown(
    tmp_path: Path,
) -> None:
    """Redis lost what the checks showed: the bot cannot tell what the comment was written
    about, so it approves nothing, says why and checks again; an /approve after that works."""
    (tmp_path / "bot").mkdir()
    with (
        RedisServer(tmp_path / "redis", persistent=False) as own,
        running_bot(tmp_path / "bot", own.url) as bot,
        open_forge("github", bot, tmp_path) as pr,
    ):
        pr.open(TWO, STRICT)
        connection = redis.Redis.from_url(own.url)
        connection.flushall()
        connection.close()
        pr.comment("/approve")
        pr.work()
        assert "no record of what its checks on this pull request showed" in pr.replies()[-1]
        assert pr.verdict() == ("action_required", WAIT_2)  # checked again, and recorded
        pr.comment("/approve")
        pr.work()
        assert pr.verdict()[0] == "success"
