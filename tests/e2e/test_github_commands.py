"""End to end on GitHub, what only GitHub has: the check run's buttons (``check_run``
``requested_action`` deliveries), which run the same commands as comments do. The commands
themselves, on every forge: :mod:`tests.e2e.test_commands`."""

from __future__ import annotations

from tests.e2e.drivers import READER, GitHub
from tests.e2e.test_commands import STAGING, STRICT, TWO_NEW, WAIT_2


def test_the_recheck_button_posts_a_new_result(github: GitHub) -> None:
    github.open(STAGING, STRICT)
    github.comment("/recheck")
    github.work()
    assert len(github.check_runs()) == 2
    github.press("recheck")
    github.work()
    runs = github.check_runs()
    assert len(runs) == 3 and runs[-1]["conclusion"] == "success"
    assert github.replies() == []  # nothing to read: the new result is the answer


def test_the_approve_button_runs_the_same_checks(github: GitHub) -> None:
    github.open(TWO_NEW, STRICT)
    assert github.verdict() == ("action_required", WAIT_2)
    assert github.buttons() == ["approve", "recheck"]
    github.press("approve", user=READER)
    github.work()
    assert "needs `write` permission" in github.replies()[-1]
    assert github.verdict()[0] == "action_required"
    github.press("approve")
    github.work()
    assert github.verdict()[0] == "success"
