"""``enforce: new`` end to end on GitHub (issue 22, item 5): real ``ichor-bot serve`` and
``worker`` processes, the fake GitHub. A target with an issue on its base branch: a pull request
adding a clean file passes, one adding a new issue fails, and the push of the clean commit to
the default branch gets the full verdict."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import ROOT, Bot, running_bot
from tests.e2e.test_github_checks import Scenario, annotation_titles
from tests.fakeforge import FakeGitHub
from tests.fakeforge.fixtures import fake_github  # noqa: F401 - the fixture
from tests.support.gitops import CONFIG, configmap

PUSH_FIXTURE = ROOT / "fixtures/webhooks/github/push__branch.json"
GRADUAL = CONFIG.replace(
    "{name: prod, path: clusters/prod}", "{name: prod, path: clusters/prod, enforce: new}"
)
CLEAN = {"clusters/prod/v1/configmaps/web/extra.yaml": configmap("extra")}


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


@pytest.fixture
def scenario(fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> Scenario:  # noqa: F811
    return Scenario(fake_github, bot, tmp_path)


def dirty_base(scenario: Scenario) -> str:
    """prod under enforce: new, with a foreign file already on the base branch."""
    return scenario.base({".ichor.yaml": GRADUAL, "clusters/prod/old-notes.txt": "old\n"})


def run_on(scenario: Scenario, sha: str) -> dict[str, Any]:
    (run,) = [r for r in scenario.check_runs() if r["head_sha"] == sha]
    return run


def push_to_main(scenario: Scenario, before: str, after: str) -> None:
    payload: dict[str, Any] = copy.deepcopy(json.loads(PUSH_FIXTURE.read_text()))
    owner, name = scenario.full_name.split("/")
    clone = scenario.fake.clone_url(scenario.full_name)
    repo = payload["repository"]
    repo.update(full_name=scenario.full_name, name=name, clone_url=clone, default_branch="main")
    repo.update(html_url=clone.removesuffix(".git"), master_branch="main")
    repo["owner"].update(login=owner, name=owner)
    payload.update(ref="refs/heads/main", before=before, after=after)
    payload.update(created=False, deleted=False, installation={"id": 42})
    assert scenario.bot.post("push", payload) == 202


def test_a_clean_file_passes_a_new_issue_fails_and_the_default_branch_gets_the_full_verdict(
    scenario: Scenario,
) -> None:
    base = dirty_base(scenario)
    scenario.work.checkout("clean", create_from=base)
    clean = scenario.work.commit(CLEAN)
    scenario.work.checkout("dirty", create_from=base)
    dirty = scenario.work.commit({**CLEAN, "clusters/prod/notes.txt": "todo\n"})
    scenario.deliver(scenario.pull(21, clean, base))
    scenario.deliver(scenario.pull(22, dirty, base))
    scenario.work_once()

    passed = run_on(scenario, clean)
    assert passed["conclusion"] == "success"
    output = passed["output"]
    assert output["title"] == (
        "Passed under enforce: new · no new issues, 1 already on base, not blocking"
    )
    assert (
        "prod is under `enforce: new`: only the issues this change introduces fail the check; "
        "1 issue already on base is listed but not blocking." in output["summary"]
    )
    assert "old-notes.txt" in output["summary"]  # listed, not hidden
    assert annotation_titles(passed) == []

    failed = run_on(scenario, dirty)
    assert failed["conclusion"] == "failure"
    assert failed["output"]["title"] == "1 target refused · 1 new issue, 1 already on base"
    assert annotation_titles(failed) == ["foreign-file"]
    assert [a["path"] for a in failed["output"]["annotations"]] == ["clusters/prod/notes.txt"]

    # The clean pull request is merged: main moves to its commit, and that push's check is
    # the full verdict, the issue on base included.
    scenario.work.checkout("main")
    scenario.work.git("merge", "-q", "--ff-only", "clean")
    scenario.publish()
    push_to_main(scenario, base, clean)
    scenario.work_once()
    pushed = [r for r in scenario.check_runs() if r["head_sha"] == clean]
    assert [r["conclusion"] for r in pushed] == ["success", "failure"]
    assert pushed[1]["output"]["title"] == "1 target refused · no new issues, 1 already on base"
    assert (
        "which applies to pull requests: this push gets the full verdict"
        in (pushed[1]["output"]["summary"])
    )
    scenario.assert_clean()
