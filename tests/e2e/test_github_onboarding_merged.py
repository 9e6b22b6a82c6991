"""End to end on GitHub, after the onboarding pull request is merged: the next push to the
default branch is checked as any configured repository's is, and the ``ichor/acceptance``
check's verdict per target is the one the onboarding pull request's body foretold."""

from __future__ import annotations

import re

import pytest

from tests.e2e.drivers import GitHub
from tests.e2e.test_onboarding import BRANCH, proposals, push_to_main, unconfigured
from tests.fakeforge.github.model import iso, time_now
from tests.support.gitops import configmap

# A row of the body's overview table: | `name` | <code>path</code> | verdict | n of m documents |
BODY_ROW = re.compile(
    r"^\| `(?P<name>[^`]+)` \| .+? \| (?P<verdict>.+?) \| \d+ of \d+ documents \|$"
)
# A row of the check's summary: | name | <code>path</code> | at head | at base | new | on base |
CHECK_ROW = re.compile(
    r"^\| (?P<name>[^|`]+?) \| <code>[^|]*</code> \| (?P<head>[^|]+?) \| [^|]+ \| \d+ \| \d+ \|$"
)


@pytest.fixture
def github(github: GitHub) -> GitHub:
    """``clusters/prod`` and ``clusters/staging`` (accepted as proposed) and ``apps``, whose
    stray notes file the gate refuses (:data:`tests.e2e.test_onboarding.UNCONFIGURED`)."""
    unconfigured(github, {"apps/web/notes.txt": "todo\n"})
    return github


def merge_proposal(github: GitHub, number: int) -> str:
    """Merge ``ichor/bootstrap`` into main as the forge's merge button would; the merge."""
    github.local.git("fetch", "-q", str(github.bare), f"+refs/heads/{BRANCH}:refs/heads/{BRANCH}")
    github.local.git("merge", "-q", "--no-ff", "-m", f"Merge pull request #{number}", BRANCH)
    merge = github.local.git("rev-parse", "HEAD")
    github.publish()
    github.fake.update_pull(github.full_name, number, state="closed", merged_at=iso(time_now()))
    return merge


def verdicts_in_body(body: str) -> dict[str, str]:
    """Each proposed target's verdict in the onboarding body's overview table."""
    found = (BODY_ROW.match(line) for line in body.splitlines())
    return {m["name"]: _word(m["verdict"]) for m in found if m is not None}


def verdicts_in_check(summary: str) -> dict[str, str]:
    """Each target's verdict at head in the check run's summary table."""
    found = (CHECK_ROW.match(line) for line in summary.splitlines())
    return {m["name"]: _word(m["head"]) for m in found if m is not None}


def _word(verdict: str) -> str:
    # "**refused** (1 error)" in the body, "❌ refused" in the check: the same verdict.
    return "refused" if "refused" in verdict else verdict.strip("✅ ")


def test_after_the_merge_the_check_agrees_with_the_body(github: GitHub) -> None:
    push_to_main(github, {"README.md": "changed\n"})
    (pull,) = proposals(github)
    foretold = verdicts_in_body(pull.body)
    assert foretold == {
        "apps": "refused",
        "clusters-prod": "accepted",
        "clusters-staging": "accepted",
    }, github.runs[-1].log[-3000:]
    before = github.rev("main")
    merge = merge_proposal(github, pull.number)
    # The merge's own push is checked with the configuration of its base, which has none:
    # silent, and the merged proposal is not proposed again.
    pushes = github.pushes()
    github.deliver_push(before, merge)
    github.work()
    assert github.check_runs() == [] and github.pushes() == pushes
    assert github.rev("main") == merge

    # The next push to main, touching both targets, is checked against the merge.
    head = push_to_main(
        github,
        {
            "apps/web/service.yaml": configmap("service").replace("prod", "two"),
            "clusters/prod/v1/configmaps/web/settings.yaml": configmap("settings").replace(
                "prod", "two"
            ),
        },
    )
    check = github.only_check_run()
    assert check["name"] == "ichor/acceptance" and check["head_sha"] == head
    assert check["status"] == "completed" and check["conclusion"] == "failure"
    assert f"against base <code>{merge[:7]}</code>" in check["output"]["summary"]
    # The two targets the push touches; clusters-staging it does not.
    touched = verdicts_in_check(check["output"]["summary"])
    assert touched == {n: foretold[n] for n in ("apps", "clusters-prod")}
    assert len(proposals(github)) == 1 and github.pushes() == pushes
