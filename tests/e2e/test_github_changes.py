"""End to end on GitHub: two workers, each with a mirror of its own as on two hosts, given the
same change request at once: only the Redis lock is shared, and one pull request is opened.
The change commands themselves, on every forge: :mod:`tests.e2e.test_changes`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.drivers import GitHub
from tests.e2e.test_changes import BASE, CONFIG, NOTES
from tests.support.waiting import wait_until


@pytest.fixture
def github(github: GitHub) -> GitHub:
    github.base(BASE, config=CONFIG)
    github.push(NOTES)
    return github


def test_two_workers_given_the_same_request_open_exactly_one_pull_request(
    github: GitHub, tmp_path: Path
) -> None:
    # Two deliveries of the same command (two comments) and two workers.
    github.comment("/approve web/settings")
    github.comment("/approve web/settings")
    hosts = [tmp_path / f"host-{n}" for n in (1, 2)]
    for host in hosts:
        host.mkdir()
    workers = [github.bot.start_worker(github.fake.env(), host / "data") for host in hosts]
    try:
        wait_until(lambda: len(github.replies()) == 2, "a reply to each comment", bound=90)
    finally:
        for worker in workers:
            worker.kill()
    replies = github.replies()
    assert len(replies) == 2, [w.log for w in workers]
    (pull,) = [p for p in github.pulls() if p.head_ref == "ichor/approve-web-settings"]
    assert all(pull.url in r for r in replies), replies
    assert github.pushes() == 1  # the second found the change there, pushed nothing
