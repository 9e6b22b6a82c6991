"""``enforce: new`` through the check job on the local forge (real git): which checks it weighs
(a pull request, a branch pushed as its pull request would be) and which get the full verdict
(a push to the default branch; a pull request under a base that does not set it yet)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.webhooks import PushEvent, event_to_dict
from tests.checks.test_pipeline import check_file, configured, pull, ref, settings
from tests.support.gitops import CONFIG, base_files, configmap
from tests.support.gitrepo import WorkRepo
from workers.jobs import handle_delivery

NAME = "acme/gitops"
GRADUAL = CONFIG.replace(
    "{name: prod, path: clusters/prod}", "{name: prod, path: clusters/prod, enforce: new}"
)
DIRTY = {"clusters/prod/old-notes.txt": "old\n"}
CLEAN_FILE = {"clusters/prod/v1/configmaps/web/extra.yaml": configmap("extra")}


@pytest.fixture
def repo(tmp_path: Path) -> WorkRepo:
    return WorkRepo(tmp_path / "repos" / NAME)


def dirty_base(repo: WorkRepo, config: str = GRADUAL) -> str:
    return repo.commit({**base_files(), **DIRTY, ".ichor.yaml": config}, "base")


def test_a_clean_file_in_a_dirty_target_passes_a_pull_request(
    tmp_path: Path, repo: WorkRepo
) -> None:
    base = dirty_base(repo)
    head = repo.commit(CLEAN_FILE)
    with configured(settings(tmp_path)):
        check = handle_delivery("github", "e1", pull(head, base))["check"]
    assert check["conclusion"] == "success"
    assert (check["new_issues"], check["existing_issues"]) == (0, 1)
    record = check_file(tmp_path, head)
    assert "enforce: new" in record["title"]
    assert "old-notes.txt" in record["summary"]  # listed, not hidden


def test_a_new_issue_fails_the_pull_request(tmp_path: Path, repo: WorkRepo) -> None:
    base = dirty_base(repo)
    head = repo.commit({**CLEAN_FILE, "clusters/prod/notes.txt": "todo\n"})
    with configured(settings(tmp_path)):
        check = handle_delivery("github", "e2", pull(head, base))["check"]
    assert check["conclusion"] == "failure"
    assert (check["new_issues"], check["existing_issues"]) == (1, 1)


def test_a_push_to_the_default_branch_gets_the_full_verdict(tmp_path: Path, repo: WorkRepo) -> None:
    before = dirty_base(repo)
    after = repo.commit(CLEAN_FILE)
    event = PushEvent(ref(), "refs/heads/main", before, after, False, False, "alice", 1)
    with configured(settings(tmp_path)):
        check = handle_delivery("github", "e3", event_to_dict(event))["check"]
    assert check["conclusion"] == "failure"
    assert "applies to pull requests" in check_file(tmp_path, after)["summary"]


def test_a_pushed_branch_is_weighed_as_its_pull_request_would_be(
    tmp_path: Path, repo: WorkRepo
) -> None:
    base = dirty_base(repo)
    repo.checkout("feature", create_from=base)
    after = repo.commit(CLEAN_FILE)
    event = PushEvent(ref(), "refs/heads/feature", base, after, False, False, "alice", 1)
    with configured(settings(tmp_path)):
        check = handle_delivery("github", "e4", event_to_dict(event))["check"]
    # The same commit's pull request passes: its two checks never disagree.
    assert check["conclusion"] == "success"


def test_the_pull_request_that_sets_enforce_new_is_judged_by_the_base(
    tmp_path: Path, repo: WorkRepo
) -> None:
    base = dirty_base(repo, CONFIG)
    head = repo.commit({".ichor.yaml": GRADUAL})
    with configured(settings(tmp_path)):
        check = handle_delivery("github", "e5", pull(head, base))["check"]
    # A pull request cannot loosen its own gate; changing .ichor.yaml touches every target.
    assert check["conclusion"] == "failure"
