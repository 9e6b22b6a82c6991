"""End to end on GitHub, what only GitHub's checks do: a check suite re-requested from GitHub's
UI, and a check that cannot run, which still completes its check run saying why. The check
itself, on every forge: :mod:`tests.e2e.test_checks`."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.drivers import GitHub
from tests.e2e.drivers.github import TOKEN_CALL
from tests.e2e.harness import ROOT

SUITE_FIXTURE = ROOT / "fixtures/webhooks/github/check_suite__rerequested.json"


def test_a_rerequested_check_runs_again_against_its_pull_requests_base(github: GitHub) -> None:
    github.base({"clusters/prod/old-notes.txt": "old\n"})
    head = github.commit({"clusters/prod/new-notes.txt": "new\n"})
    github.pull_request(head)
    github.work()
    payload: dict[str, Any] = json.loads(SUITE_FIXTURE.read_text())
    clone_url = github.fake.clone_url(github.full_name)
    # Every URL of the repository names it: one naming another is refused at ingress.
    payload["repository"].update(
        full_name=github.full_name, clone_url=clone_url, html_url=clone_url.removesuffix(".git")
    )
    payload["installation"] = {"id": 42}
    suite = payload["check_suite"]
    suite["head_sha"] = head
    suite["pull_requests"][0]["number"] = github.number
    suite["pull_requests"][0]["head"]["sha"] = head
    assert github.bot.post("check_suite", payload) == 202
    github.reset_calls()
    github.work()
    repo = f"/repos/{github.full_name}"
    assert github.calls() == [
        TOKEN_CALL,  # a new worker process: its token cache starts empty
        f"GET {repo}/pulls/7 200",
        f"POST {repo}/check-runs 201",
        f"PATCH {repo}/check-runs/2 200",
        # The finding was commented on the first run: looked at, not posted again.
        f"GET {repo}/pulls/7/comments 200",
    ]
    titles = [r["output"]["title"] for r in github.check_runs()]
    assert titles == ["1 target refused · 1 new issue, 1 already on base"] * 2


def test_a_check_that_cannot_run_says_why_and_is_never_left_in_progress(github: GitHub) -> None:
    github.base()
    head = github.commit({"clusters/prod/notes.txt": "todo\n"})
    github.pull_request(head)
    # The repository disappears from git hosting (a permanent failure: 404 on fetch).
    github.bare.rename(github.bare.with_name(github.bare.name + "-gone"))
    run = github.work()
    check = github.only_check_run()
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert "could not be completed" in check["output"]["title"].lower()
    assert "could not be completed" in run.log
