"""The check job on the local forge: real git, no network, no Redis."""

from __future__ import annotations

import json
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from bot.forges.local import recent_results
from bot.queueing.base import pull_key
from bot.repos import ForgeKind, RepoRef
from bot.settings import Settings
from bot.state.base import StateStore
from bot.state.history import FileHistory
from bot.state.memory import memory_state
from bot.state.rates import RateBudget
from bot.webhooks import ChangeRequestEvent, PushEvent, event_to_dict
from tests.support.gitops import SECRET, THREE_PUSHES, base_files, configmap
from tests.support.gitrepo import WorkRepo
from workers.context import WorkerContext, build_context, installed_context
from workers.jobs import handle_delivery

NAME = "acme/gitops"


def configured(
    settings: Settings, state: StateStore | None = None
) -> AbstractContextManager[WorkerContext]:
    """A worker context built as ``ichor-bot worker`` builds one, for the RQ job functions."""
    return installed_context(build_context(settings, state or memory_state()))


def newest(state: StateStore, head: str, number: int = 7) -> None:
    """Record ``head`` as received for the pull request, as ingress does."""
    state.heads.record_head(pull_key("github", NAME, number), head, redelivery=False)


@pytest.fixture
def repo(tmp_path: Path) -> WorkRepo:
    return WorkRepo(tmp_path / "repos" / NAME)


def settings(tmp_path: Path) -> Settings:
    return Settings(local_repos=tmp_path / "repos", data_dir=tmp_path / "data")


def ref(name: str = NAME) -> RepoRef:
    return RepoRef(
        ForgeKind.GITHUB,
        name,
        "1",
        f"https://github.com/{name}.git",
        f"https://github.com/{name}",
        "main",
    )


def pull(head: str, base: str, number: int = 7) -> dict[str, Any]:
    event = ChangeRequestEvent(
        ref(), number, "opened", head, "main", "feature", base, None, NAME, False, "alice", 1, False
    )
    return event_to_dict(event)


def check_file(tmp_path: Path, sha: str) -> dict[str, Any]:
    path = tmp_path / "data" / "local" / "checks" / "acme_gitops" / f"{sha}.json"
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def base_commit(repo: WorkRepo, extra: dict[str, str | None] | None = None) -> str:
    return repo.commit({**base_files(), **(extra or {})}, "base")


def test_clean_pull_request_is_accepted(tmp_path: Path, repo: WorkRepo) -> None:
    base = base_commit(repo)
    head = repo.commit({"clusters/prod/v1/configmaps/web/other.yaml": configmap("other")})
    with configured(settings(tmp_path)):
        result = handle_delivery("github", "d1", pull(head, base))
    assert result["check"]["status"] == "posted"
    assert result["check"]["conclusion"] == "success"
    record = check_file(tmp_path, head)
    assert record["status"] == "completed" and record["conclusion"] == "success"
    assert record["external_id"] == "d1"
    assert recent_results(tmp_path / "data")[0]["head_sha"] == head


def test_foreign_file_and_plaintext_secret_are_new_issues(tmp_path: Path, repo: WorkRepo) -> None:
    base = base_commit(repo)
    head = repo.commit(
        {"clusters/prod/notes.txt": "todo\n", "clusters/prod/v1/secrets/web/db.yaml": SECRET}
    )
    with configured(settings(tmp_path)):
        result = handle_delivery("github", "d2", pull(head, base))
    check = result["check"]
    assert check["conclusion"] == "failure"
    assert (check["new_issues"], check["existing_issues"]) == (2, 0)
    record = check_file(tmp_path, head)
    kinds = sorted(a["title"] for a in record["annotations"])
    assert kinds == ["foreign-file", "plaintext-secret"]
    # Only the touched target is checked: staging is named as not touched.
    assert "staging" in record["summary"]


def test_issue_already_on_base_is_marked_existing(tmp_path: Path, repo: WorkRepo) -> None:
    base = base_commit(repo, {"clusters/prod/notes.txt": "old\n"})
    head = repo.commit({"clusters/prod/v1/configmaps/web/more.yaml": configmap("more")})
    with configured(settings(tmp_path)):
        check = handle_delivery("github", "d3", pull(head, base))["check"]
    assert check["conclusion"] == "failure"  # the target is still refused at head
    assert (check["new_issues"], check["existing_issues"]) == (0, 1)
    # notes.txt is not a file the pull request changed: no annotation, listed in the summary.
    record = check_file(tmp_path, head)
    assert record["annotations"] == []
    assert "notes.txt" in record["summary"]


def test_the_status_page_keeps_the_checks_facts(tmp_path: Path, repo: WorkRepo) -> None:
    """New issues first, those on base after them, each target's verdict, the branch, and the
    job: what the status page's check and repository pages show (design.md 7)."""
    base = base_commit(repo, {"clusters/prod/notes.txt": "old\n"})
    head = repo.commit({"clusters/prod/v1/secrets/web/db.yaml": SECRET})
    with configured(settings(tmp_path)):
        handle_delivery("github", "d5", pull(head, base))
    (entry,) = FileHistory(tmp_path / "data" / "history").checks()
    assert (entry.forge, entry.posted_to, entry.job_id) == ("github", "local", "github-d5")
    assert entry.started_at is not None and entry.started_at <= entry.at
    facts = entry.facts
    assert facts is not None and facts.branch == "feature"
    assert [(f.path, f.code, f.new) for f in facts.findings] == [
        ("clusters/prod/v1/secrets/web/db.yaml", "plaintext-secret", True),
        ("clusters/prod/notes.txt", "foreign-file", False),
    ]
    assert facts.finding_count == 2 and facts.findings[0].line == 1
    (prod,) = facts.targets
    assert (prod.name, prod.verdict, prod.base_verdict, prod.new, prod.existing) == (
        "prod",
        "refused",
        "refused",
        1,
        1,
    )
    assert prod.blocking and facts.waiting == ()


def test_untouched_target_does_not_fail_the_change(tmp_path: Path, repo: WorkRepo) -> None:
    base = base_commit(repo, {"clusters/staging/notes.txt": "old\n"})
    head = repo.commit({"README.md": "changed\n"})
    with configured(settings(tmp_path)):
        check = handle_delivery("github", "d4", pull(head, base))["check"]
    assert check["conclusion"] == "success"


def test_repository_without_configuration_gets_no_check(tmp_path: Path, repo: WorkRepo) -> None:
    base = repo.commit({"README.md": "hello\n"})
    head = repo.commit({"notes.txt": "x\n"})
    state = memory_state()
    with configured(settings(tmp_path), state):
        check = handle_delivery("github", "d5", pull(head, base))["check"]
    assert check["status"] == "not-configured"
    assert not (tmp_path / "data" / "local" / "checks").exists()
    # Nothing is to be posted on this head: the reconciler need not queue it again.
    assert state.checked.checked(pull_key("github", NAME, 7), head)


def test_superseded_head_is_not_checked(tmp_path: Path, repo: WorkRepo) -> None:
    base = base_commit(repo)
    old = repo.commit({"clusters/prod/notes.txt": "x\n"})
    new = repo.commit({"clusters/prod/notes.txt": None})
    heads = memory_state()
    newest(heads, new)
    with configured(settings(tmp_path), heads):
        assert handle_delivery("github", "d6", pull(old, base))["check"]["status"] == "superseded"
        assert handle_delivery("github", "d7", pull(new, base))["check"]["status"] == "posted"
    assert not (tmp_path / "data" / "local" / "checks" / "acme_gitops" / f"{old}.json").exists()
    # The head checked is noted as such (what the reconciler reads), the superseded one not.
    pull7 = pull_key("github", NAME, 7)
    assert heads.checked.checked(pull7, new) and not heads.checked.checked(pull7, old)


def test_push_compares_with_before(tmp_path: Path, repo: WorkRepo) -> None:
    before = base_commit(repo)
    after = repo.commit({"clusters/staging/tools.sh": "echo\n"})
    event = PushEvent(ref(), "refs/heads/main", before, after, False, False, "alice", 1)
    with configured(settings(tmp_path)):
        check = handle_delivery("github", "d8", event_to_dict(event))["check"]
    assert check["conclusion"] == "failure"
    assert check["new_issues"] == 1


def test_config_change_in_pull_request_is_validated_but_base_config_applies(
    tmp_path: Path, repo: WorkRepo
) -> None:
    base = base_commit(repo, {"clusters/prod/notes.txt": "x\n"})
    # The pull request tries to drop the prod target (loosening its own gate) with a typo too.
    head = repo.commit({".ichor.yaml": "version: 1\ntargets: []\nbogus: 1\n"})
    with configured(settings(tmp_path)):
        check = handle_delivery("github", "d9", pull(head, base))["check"]
    assert check["conclusion"] == "failure"
    record = check_file(tmp_path, head)
    assert "bogus" in record["summary"]


def line_comments(tmp_path: Path, number: int = 7) -> dict[str, Any]:
    path = tmp_path / "data" / "local" / "line-comments" / "acme_gitops" / f"{number}.json"
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_three_pushes_leave_one_summary_and_no_duplicate_line_comments(
    tmp_path: Path, repo: WorkRepo
) -> None:
    base = base_commit(repo)
    first, second, third = (repo.commit(files) for files in THREE_PUSHES)
    heads = memory_state()
    with configured(settings(tmp_path), heads):
        for n, head in enumerate((first, second, third)):
            newest(heads, head)
            handle_delivery("github", f"push-{n}", pull(head, base))
            comments = line_comments(tmp_path)
            if n == 0:
                assert sorted(c["path"] for c in comments.values()) == [
                    "clusters/prod/notes.txt",
                    "clusters/prod/v1/secrets/web/db.yaml",
                ]
    # Every finding was commented once; the fixed ones are resolved, none deleted.
    assert sorted((c["path"], c["resolved"]) for c in comments.values()) == [
        ("clusters/prod/more.txt", True),
        ("clusters/prod/notes.txt", True),
        ("clusters/prod/v1/secrets/web/db.yaml", True),
    ]
    summaries = list((tmp_path / "data" / "local" / "comments" / "acme_gitops").iterdir())
    assert [p.name for p in summaries] == ["7.md"]
    assert "All clear" in summaries[0].read_text()


def test_line_comments_wait_while_the_rate_limit_runs_low(tmp_path: Path, repo: WorkRepo) -> None:
    base = base_commit(repo)
    head = repo.commit(THREE_PUSHES[0])
    context = build_context(settings(tmp_path), memory_state())
    assert context.rates is not None
    # What the repository's requests spend (the local forge reports none: set by hand).
    context.rates.put(RateBudget("local", "installation 1", 10, 5000, time.time() + 600, 0.0))
    with installed_context(context):
        check = handle_delivery("github", "d11", pull(head, base))["check"]
    assert check["conclusion"] == "failure" and check["new_issues"] == 2
    assert not (tmp_path / "data" / "local" / "line-comments").exists()  # none this time
    assert "db.yaml" in check_file(tmp_path, head)["summary"]  # the summary still says


def test_push_to_a_branch_is_checked_against_the_default_branch(
    tmp_path: Path, repo: WorkRepo
) -> None:
    base = base_commit(repo, {"clusters/staging/notes.txt": "old\n"})
    repo.checkout("feature", create_from=base)
    first = repo.commit({"clusters/prod/notes.txt": "todo\n"})
    # The second push only touches staging, yet prod stays touched relative to main: the
    # verdict is the one a pull request into main would get.
    second = repo.commit({"clusters/staging/other.yaml": configmap("other")})
    event = PushEvent(ref(), "refs/heads/feature", first, second, False, False, "alice", 1)
    with configured(settings(tmp_path)):
        check = handle_delivery("github", "d10", event_to_dict(event))["check"]
    assert check["conclusion"] == "failure"
    assert (check["new_issues"], check["existing_issues"]) == (1, 1)
