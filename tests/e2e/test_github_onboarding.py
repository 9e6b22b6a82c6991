"""End to end on GitHub, onboarding beyond the first proposal (which every forge makes:
:mod:`tests.e2e.test_onboarding`): never proposed again after it was closed, proposed again
on request (``ichor-bot onboard``), and proposed for each repository an installation was
given."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.e2e.drivers import GitHub
from tests.e2e.harness import ROOT
from tests.e2e.test_onboarding import BRANCH, proposals, push_to_main, unconfigured

INSTALLATION_FIXTURE = ROOT / "fixtures/webhooks/github/installation_repositories__added.json"


@pytest.fixture
def github(github: GitHub) -> GitHub:
    unconfigured(github)
    return github


def test_a_closed_proposal_is_never_made_again_unless_asked_for(github: GitHub) -> None:
    push_to_main(github, {"README.md": "changed\n"})
    (pull,) = proposals(github)
    pushes = github.pushes()
    # Closed unmerged: no trigger proposes again.
    github.fake.update_pull(github.full_name, pull.number, state="closed")
    push_to_main(github, {"README.md": "and again\n"})
    assert [p.state for p in proposals(github)] == ["closed"] and github.pushes() == pushes
    push_to_main(github, {"README.md": "once more\n"})
    assert len(proposals(github)) == 1 and github.pushes() == pushes
    assert github.check_runs() == []  # not configured: the check stays silent

    # On request, it is proposed again: a new pull request from a new push.
    done = github.onboard()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pr-opened" in done.stdout
    assert sorted(p.state for p in proposals(github)) == ["closed", "open"]
    assert github.pushes() == pushes + 1
    assert github.rev(f"{BRANCH}^") == github.rev("main")


def test_an_installation_proposes_for_each_repository_it_was_given(github: GitHub) -> None:
    payload: dict[str, Any] = copy.deepcopy(json.loads(INSTALLATION_FIXTURE.read_text()))
    payload["installation"]["id"] = 42
    payload["repositories_added"][0].update(
        full_name=github.full_name, name=github.full_name.split("/")[1]
    )
    assert github.bot.post("installation_repositories", payload) == 202
    run = github.work()
    opened = proposals(github)
    assert len(opened) == 1 and opened[0].base_ref == "main", run.log[-3000:]
    # Its default branch came from the remote's HEAD; a later push finds the open proposal.
    pushes = github.pushes()
    push_to_main(github, {"README.md": "changed\n"})
    assert len(proposals(github)) == 1 and github.pushes() == pushes
