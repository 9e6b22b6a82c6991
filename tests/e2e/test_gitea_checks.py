"""End to end on Gitea and Forgejo: a signed ``pull_request`` webhook (Gitea or Forgejo headers)
→ ``ichor-bot serve`` → Redis → a real ``ichor-bot worker`` → the fake Gitea (every request
validated against the flavor's recorded Swagger description) and git over smart HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.gitea_scenario import GiteaScenario
from tests.e2e.harness import Bot, running_bot
from tests.fakeforge.gitea import FakeGitea
from tests.support.gitops import SECRET, THREE_PUSHES, configmap


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


@pytest.fixture(params=["gitea", "forgejo"])
def fake(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FakeGitea]:
    with FakeGitea(tmp_path / "forge-git", flavor=request.param) as running:
        yield running


@pytest.fixture
def scenario(fake: FakeGitea, bot: Bot, tmp_path: Path) -> GiteaScenario:
    return GiteaScenario(fake, bot, tmp_path)


def test_a_clean_pull_request(scenario: GiteaScenario) -> None:
    base = scenario.base()
    head = scenario.work.commit({"clusters/prod/v1/configmaps/web/extra.yaml": configmap("extra")})
    scenario.deliver(scenario.pull(7, head, base))
    scenario.work_once()
    name = scenario.full_name
    assert scenario.fake.calls_summary() == [
        f"POST /api/v1/repos/{name}/statuses/{head} 201",
        "GET /api/v1/user 200",
        f"GET /api/v1/repos/{name}/issues/7/comments 200",
        f"POST /api/v1/repos/{name}/issues/7/comments 201",
        f"POST /api/v1/repos/{name}/statuses/{head} 201",
    ]
    assert scenario.states(head) == ["pending", "success"]
    status = scenario.fake.statuses(name, head)[-1]
    assert status["context"] == "ichor/acceptance"
    (summary,) = scenario.summary(7)
    assert status["target_url"] == summary["html_url"]  # the status links to the summary
    scenario.fake.assert_clean()


def test_b_foreign_file_and_plaintext_secret(scenario: GiteaScenario) -> None:
    base = scenario.base()
    head = scenario.work.commit(
        {"clusters/prod/notes.txt": "todo\n", "clusters/prod/v1/secrets/web/db.yaml": SECRET}
    )
    scenario.deliver(scenario.pull(8, head, base))
    scenario.work_once()
    assert scenario.states(head) == ["pending", "failure"]
    (summary,) = scenario.summary(8)
    assert "plaintext-secret" in summary["body"] and "foreign-file" in summary["body"]
    paths = sorted(c["path"] for c in scenario.fake.review_comments(scenario.full_name, 8))
    assert paths == ["clusters/prod/notes.txt", "clusters/prod/v1/secrets/web/db.yaml"]
    scenario.fake.assert_clean()


def test_c_issues_already_on_base(scenario: GiteaScenario) -> None:
    base = scenario.base({"clusters/prod/old-notes.txt": "old\n"})
    head = scenario.work.commit({"clusters/prod/new-notes.txt": "new\n"})
    scenario.deliver(scenario.pull(9, head, base))
    scenario.work_once()
    assert scenario.states(head) == ["pending", "failure"]
    (summary,) = scenario.summary(9)
    assert "1 new issue, 1 already on base" in summary["body"]
    paths = [c["path"] for c in scenario.fake.review_comments(scenario.full_name, 9)]
    assert paths == ["clusters/prod/new-notes.txt"]
    scenario.fake.assert_clean()


def test_a_retargeted_pull_request_is_checked_against_its_new_base(
    scenario: GiteaScenario,
) -> None:
    # release is older than main: the issue main already has is new against release.
    release = scenario.base()
    base = scenario.work.commit({"clusters/prod/old-notes.txt": "old\n"})
    head = scenario.work.commit({"clusters/prod/new-notes.txt": "new\n"})
    scenario.work.set_ref("refs/heads/release", release)
    scenario.deliver(scenario.pull(13, head, base))
    scenario.work_once()
    (summary,) = scenario.summary(13)
    assert "1 new issue, 1 already on base" in summary["body"]

    scenario.fake.update_pull(scenario.full_name, 13, base_ref="release", base_sha=release)
    payload = scenario.pull(13, head, release)
    payload["action"] = "edited"
    payload["changes"] = {"ref": {"from": "main"}}
    payload["pull_request"]["base"].update(ref="release", label="release")
    scenario.deliver(payload)
    scenario.work_once()
    assert scenario.states(head) == ["pending", "failure", "pending", "failure"]
    (summary,) = scenario.summary(13)  # edited in place
    assert "2 new issues" in summary["body"]
    scenario.fake.assert_clean()


def test_d_pull_request_from_a_fork(scenario: GiteaScenario) -> None:
    base = scenario.base()
    scenario.work.publish(scenario.bare)
    scenario.work.checkout("fork-feature", create_from=base)
    head = scenario.work.commit({"clusters/prod/v1/secrets/web/db.yaml": SECRET})
    scenario.work.checkout("main")
    scenario.work.git("branch", "-D", "fork-feature")
    scenario.deliver(scenario.pull(10, head, base, fork="forker/gitops"))
    scenario.work_once()
    assert scenario.states(head) == ["pending", "failure"]
    paths = {r.path for r in scenario.fake.git.requests}
    assert paths and all(p.startswith(f"/{scenario.full_name}.git/") for p in paths)
    scenario.fake.assert_clean()


def test_e_many_issues_cap_line_comments(scenario: GiteaScenario) -> None:
    base = scenario.base()
    head = scenario.work.commit({f"clusters/prod/junk-{n:03}.txt": "x\n" for n in range(120)})
    scenario.deliver(scenario.pull(11, head, base))
    scenario.work_once()
    assert scenario.states(head) == ["pending", "failure"]
    assert len(scenario.fake.review_comments(scenario.full_name, 11)) == 30
    (summary,) = scenario.summary(11)
    assert "120 new issues" in summary["body"]
    scenario.fake.assert_clean()


def test_f_a_502_and_a_429_succeed_on_retry(scenario: GiteaScenario) -> None:
    base = scenario.base()
    head = scenario.work.commit({"clusters/prod/notes.txt": "todo\n"})
    payload = scenario.pull(12, head, base)
    scenario.fake.inject(method="POST", path=r"/api/v1/repos/.*/statuses/.*", status=502, times=1)
    scenario.fake.inject(
        method="POST",
        path=r"/api/v1/repos/.*/issues/\d+/comments",
        status=429,
        headers={"retry-after": "1"},
        times=1,
    )
    scenario.deliver(payload)
    scenario.work_once()
    assert scenario.states(head) == ["pending", "failure"]
    assert len(scenario.summary(12)) == 1
    scenario.fake.assert_clean()


def test_g_only_the_newest_head_is_reported(scenario: GiteaScenario) -> None:
    base = scenario.base()
    old = scenario.work.commit({"clusters/prod/notes.txt": "todo\n"})
    scenario.deliver(scenario.pull(13, old, base))
    new = scenario.work.commit({"clusters/prod/notes.txt": None})
    scenario.deliver(scenario.pull(13, new, base))
    scenario.work_once()
    assert scenario.states(old) == []
    assert scenario.states(new) == ["pending", "success"]
    scenario.fake.assert_clean()


def test_three_pushes_leave_one_summary_and_no_duplicate_line_comments(
    scenario: GiteaScenario,
) -> None:
    base = scenario.base()
    name = scenario.full_name
    calls: list[list[str]] = []
    heads: list[str] = []
    for files in THREE_PUSHES:
        head = scenario.work.commit(files)
        heads.append(head)
        scenario.fake.reset_calls()
        scenario.deliver(scenario.pull(14, head, base))
        scenario.work_once()
        calls.append(scenario.fake.calls_summary())
    (summary,) = scenario.summary(14)
    assert "All clear" in summary["body"]
    comments = scenario.fake.review_comments(name, 14)
    assert sorted(c["path"] for c in comments) == [
        "clusters/prod/more.txt",
        "clusters/prod/notes.txt",
        "clusters/prod/v1/secrets/web/db.yaml",
    ]  # each finding commented exactly once across the three pushes
    api = f"/api/v1/repos/{name}"
    gitea = scenario.fake.flavor == "gitea"
    # Gitea resolves a fixed finding's comment; Forgejo has no such route and answers 404
    # (once per worker process: each push here is a new worker).
    resolved = "204" if gitea else "404"

    def push(head: str, comment: str, reviews: list[str], lines: list[str]) -> list[str]:
        return [
            f"POST {api}/statuses/{head} 201",  # pending
            "GET /api/v1/user 200",
            f"GET {api}/issues/14/comments 200",
            comment,
            f"POST {api}/statuses/{head} 201",  # the verdict, linking to the comment
            f"GET {api}/pulls/14/reviews 200",
            *[f"GET {api}/pulls/14/reviews/{n}/comments 200" for n in reviews],
            *lines,
        ]

    assert calls == [
        push(
            heads[0], f"POST {api}/issues/14/comments 201", [], [f"POST {api}/pulls/14/reviews 200"]
        ),
        push(
            heads[1],
            f"PATCH {api}/issues/comments/1 200",
            ["1"],
            [f"POST {api}/pulls/14/reviews 200", f"POST {api}/pulls/comments/2/resolve {resolved}"],
        ),
        push(
            heads[2],
            f"PATCH {api}/issues/comments/1 200",
            ["1", "2"],
            [f"POST {api}/pulls/comments/{n}/resolve 204" for n in (3, 4)]
            if gitea
            else [f"POST {api}/pulls/comments/2/resolve 404"],
        ),
    ]
    if scenario.fake.flavor == "gitea":
        assert all(c["resolver"] for c in comments)
        scenario.fake.assert_clean()
    else:
        # Forgejo's API has no route to resolve a review comment: each worker process tries
        # once, gets Forgejo's 404, and leaves fixed comments to go outdated with their line.
        assert scenario.fake.validation_errors
        assert all("/resolve:" in e for e in scenario.fake.validation_errors)
        assert scenario.fake.auth_failures == []
