"""End to end on GitHub, after the onboarding pull request is merged: the next push to the
default branch is checked as any configured repository's is, and the ``ichor/acceptance``
check's verdict per target is the one the onboarding pull request's body foretold."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import Bot, running_bot
from tests.e2e.test_github_onboarding import BRANCH, Unconfigured
from tests.fakeforge import FakeGitHub
from tests.fakeforge.fixtures import fake_github  # noqa: F401 - the fixture
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


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


class TwoFolders(Unconfigured):
    """``clusters/prod`` and ``clusters/staging`` (accepted as proposed) and ``apps``, whose
    stray notes file the gate refuses."""

    def __init__(self, fake: FakeGitHub, bot: Bot, tmp_path: Path) -> None:
        super().__init__(fake, bot, tmp_path)
        self.head = self.work.commit(
            {
                "apps/web/deployment.yaml": configmap("web"),
                "apps/web/service.yaml": configmap("service"),
                "apps/api/settings.yaml": configmap("api"),
                "apps/web/notes.txt": "todo\n",
            },
            "apps",
        )
        self.work.publish(self.bare)

    def merge_proposal(self, number: int) -> str:
        """Merge ``ichor/bootstrap`` into main as the forge's merge button would; the merge."""
        self.work.git("fetch", "-q", str(self.bare), f"+refs/heads/{BRANCH}:refs/heads/{BRANCH}")
        self.work.git("merge", "-q", "--no-ff", "-m", f"Merge pull request #{number}", BRANCH)
        self.head = self.work.git("rev-parse", "HEAD")
        self.work.publish(self.bare)
        self.fake.update_pull(self.full_name, number, state="closed", merged_at=iso(time_now()))
        return self.head


@pytest.fixture
def repo(fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> Iterator[TwoFolders]:  # noqa: F811
    scenario = TwoFolders(fake_github, bot, tmp_path)
    yield scenario
    for key in bot.redis.scan_iter(f"ichor:onboarding:*:github:{scenario.full_name}"):
        bot.redis.delete(key)


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


def test_after_the_merge_the_check_agrees_with_the_body(repo: TwoFolders) -> None:
    run = repo.push({"README.md": "changed\n"})
    (pull,) = repo.proposals()
    foretold = verdicts_in_body(pull["body"])
    foretold = verdicts_in_body(pull["body"])
    assert foretold == {
        "apps": "refused",
        "clusters-prod": "accepted",
        "clusters-staging": "accepted",
    }, run.log[-3000:]
    before = repo.head
    merge = repo.merge_proposal(pull["number"])
    # The merge's own push is checked with the configuration of its base, which has none:
    # silent, and the merged proposal is not proposed again.
    pushes = repo.pushes()
    repo.deliver_push(before)
    assert repo.fake.check_runs(repo.full_name) == [] and repo.pushes() == pushes
    assert repo.git("rev-parse", "main").strip() == merge

    # The next push to main, touching both targets, is checked against the merge.
    run = repo.push(
        {
            "apps/web/service.yaml": configmap("service").replace("prod", "two"),
            "clusters/prod/v1/configmaps/web/settings.yaml": configmap("settings").replace(
                "prod", "two"
            ),
        }
    )
    (check,) = repo.fake.check_runs(repo.full_name)
    assert check["name"] == "ichor/acceptance" and check["head_sha"] == repo.head, run.log[-3000:]
    assert check["status"] == "completed" and check["conclusion"] == "failure"
    assert f"against base <code>{merge[:7]}</code>" in check["output"]["summary"]
    # The two targets the push touches; clusters-staging it does not.
    touched = verdicts_in_check(check["output"]["summary"])
    assert touched == {n: foretold[n] for n in ("apps", "clusters-prod")}
    assert len(repo.proposals()) == 1 and repo.pushes() == pushes
    assert repo.fake.validation_errors == [] and repo.fake.auth_failures == []
