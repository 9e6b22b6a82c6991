"""End to end on GitLab: a ``Merge Request Hook`` (``X-Gitlab-Token``) → ``ichor-bot serve`` →
Redis → a real ``ichor-bot worker`` (python-gitlab over real HTTP) → the fake GitLab, which
models the commit status state machine and diff positions from GitLab's documentation."""

from __future__ import annotations

import copy
import itertools
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import ROOT, Bot, WorkerRun, running_bot
from tests.fakeforge.gitlab import FakeGitLab
from tests.support.gitops import SECRET, THREE_PUSHES, base_files, configmap
from tests.support.gitrepo import WorkRepo

MR_FIXTURE = ROOT / "fixtures/webhooks/gitlab/merge_request__update-woodpecker.json"
FINAL = {"success", "failed", "canceled"}


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeGitLab]:
    with FakeGitLab(tmp_path / "forge-git") as running:
        yield running


class GitLabScenario:
    def __init__(self, fake: FakeGitLab, bot: Bot, tmp_path: Path) -> None:
        self.fake = fake
        self.bot = bot
        self.full_name = f"e2e-{uuid.uuid4().hex[:8]}/gitops"
        bot.repositories.add(self.full_name)
        self.project_id = 4242
        fake.add_project(self.full_name, self.project_id)
        self.bare = fake.make_bare_repo(self.full_name)
        self.work = WorkRepo(tmp_path / "work")
        self.data_dir = tmp_path / "worker-data"
        self.heads: dict[int, str] = {}

    def base(self, extra: dict[str, str | None] | None = None) -> str:
        files = base_files()
        sha = self.work.commit({**files, **(extra or {})}, "base")
        self.work.publish(self.bare)
        # The merge request's commits go on a branch: main stays the base (GitLab's hooks name
        # no base commit, so the bot takes main's tip).
        self.work.checkout("feature", create_from=sha)
        return sha

    def merge_request(
        self, iid: int, head: str, base: str, *, fork_project: int | None = None
    ) -> dict[str, Any]:
        """``head`` becomes the MR's head (``refs/merge-requests/<iid>/head``); the hook."""
        self.work.set_ref(f"refs/merge-requests/{iid}/head", head)
        self.work.publish(self.bare)
        before = self.heads.get(iid)
        if before is None:
            self.fake.add_merge_request(
                self.full_name, iid, head, base, source_project_id=fork_project
            )
        else:
            self.fake.push_merge_request(self.full_name, iid, head)
        self.heads[iid] = head
        payload: dict[str, Any] = copy.deepcopy(json.loads(MR_FIXTURE.read_text()))
        project = payload["project"]
        name = self.full_name.split("/")[1]
        web = f"{self.fake.url}/{self.full_name}"
        project.update(
            id=self.project_id,
            name=name,
            path_with_namespace=self.full_name,
            web_url=web,
            git_http_url=self.fake.clone_url(self.full_name),
            http_url=self.fake.clone_url(self.full_name),
            default_branch="main",
        )
        attributes = payload["object_attributes"]
        attributes.update(
            iid=iid,
            action="update" if before else "open",
            target_branch="main",
            source_branch="feature",
            target_project_id=self.project_id,
            source_project_id=fork_project or self.project_id,
        )
        attributes["last_commit"]["id"] = head
        if before:
            attributes["oldrev"] = before
        else:
            attributes.pop("oldrev", None)
        for side, pid in (("target", self.project_id), ("source", fork_project or self.project_id)):
            attributes[side] = {
                **project,
                "id": pid,
                "path_with_namespace": self.full_name
                if pid == self.project_id
                else "forker/gitops",
            }
        payload["repository"].update(name=name, url=project["git_http_url"], homepage=web)
        return payload

    def deliver(self, payload: dict[str, Any]) -> None:
        assert self.bot.post("merge_request", payload, forge="gitlab") == 202

    def work_once(self) -> WorkerRun:
        run = self.bot.run_worker(self.fake.env(), self.data_dir)
        assert run.code == 0, run.log
        return run

    def states(self, sha: str) -> list[str]:
        """Every state the commit's ``ichor/acceptance`` status went through, in order."""
        return [
            state
            for status in self.fake.statuses(self.full_name, sha)
            if status["name"] == "ichor/acceptance"
            for state in status["history"]
        ]

    def summary(self, iid: int) -> list[dict[str, Any]]:
        return [n for n in self.fake.notes(self.full_name, iid) if "ichor:summary" in n["body"]]

    def line_discussions(self, iid: int) -> list[dict[str, Any]]:
        return [
            d
            for d in self.fake.discussions(self.full_name, iid)
            if "ichor:finding" in d["notes"][0]["body"]
        ]


@pytest.fixture
def scenario(fake: FakeGitLab, bot: Bot, tmp_path: Path) -> GitLabScenario:
    return GitLabScenario(fake, bot, tmp_path)


def test_a_clean_merge_request(scenario: GitLabScenario) -> None:
    base = scenario.base()
    head = scenario.work.commit({"clusters/prod/v1/configmaps/web/extra.yaml": configmap("extra")})
    scenario.deliver(scenario.merge_request(7, head, base))
    scenario.work_once()
    pid = scenario.project_id
    assert scenario.fake.calls_summary() == [
        f"POST /api/v4/projects/{pid}/statuses/{head} 201",
        "GET /api/v4/user 200",
        f"GET /api/v4/projects/{pid}/merge_requests/7/notes 200",
        f"POST /api/v4/projects/{pid}/merge_requests/7/notes 201",
        f"POST /api/v4/projects/{pid}/statuses/{head} 201",
    ]
    assert scenario.states(head)[-1] == "success"
    (status,) = [s for s in scenario.fake.statuses(scenario.full_name, head)]
    (note,) = scenario.summary(7)
    assert status["target_url"].endswith(f"#note_{note['id']}")  # the status links to it
    scenario.fake.assert_clean()


def test_b_foreign_file_and_plaintext_secret(scenario: GitLabScenario) -> None:
    base = scenario.base()
    head = scenario.work.commit(
        {"clusters/prod/notes.txt": "todo\n", "clusters/prod/v1/secrets/web/db.yaml": SECRET}
    )
    scenario.deliver(scenario.merge_request(8, head, base))
    scenario.work_once()
    assert scenario.states(head)[-1] == "failed"
    (note,) = scenario.summary(8)
    assert "plaintext-secret" in note["body"]
    paths = sorted(d["notes"][0]["position"]["new_path"] for d in scenario.line_discussions(8))
    assert paths == ["clusters/prod/notes.txt", "clusters/prod/v1/secrets/web/db.yaml"]
    scenario.fake.assert_clean()


def test_c_issues_already_on_base(scenario: GitLabScenario) -> None:
    base = scenario.base({"clusters/prod/old-notes.txt": "old\n"})
    head = scenario.work.commit({"clusters/prod/new-notes.txt": "new\n"})
    scenario.deliver(scenario.merge_request(9, head, base))
    scenario.work_once()
    assert scenario.states(head)[-1] == "failed"
    (note,) = scenario.summary(9)
    assert "1 new issue, 1 already on base" in note["body"]
    scenario.fake.assert_clean()


def test_d_merge_request_from_a_fork(scenario: GitLabScenario) -> None:
    base = scenario.base()
    scenario.work.checkout("fork-feature", create_from=base)
    head = scenario.work.commit({"clusters/prod/v1/secrets/web/db.yaml": SECRET})
    scenario.work.checkout("feature")
    scenario.work.git("branch", "-D", "fork-feature")
    scenario.deliver(scenario.merge_request(10, head, base, fork_project=9999))
    scenario.work_once()
    assert scenario.states(head)[-1] == "failed"
    paths = {r.path for r in scenario.fake.git.requests}
    assert paths and all(p.startswith(f"/{scenario.full_name}.git/") for p in paths)
    scenario.fake.assert_clean()


def test_e_many_issues_cap_line_comments(scenario: GitLabScenario) -> None:
    base = scenario.base()
    head = scenario.work.commit({f"clusters/prod/junk-{n:03}.txt": "x\n" for n in range(120)})
    scenario.deliver(scenario.merge_request(11, head, base))
    scenario.work_once()
    assert scenario.states(head)[-1] == "failed"
    assert len(scenario.line_discussions(11)) == 30
    scenario.fake.assert_clean()


def test_f_faults_are_retried_and_the_status_always_ends(scenario: GitLabScenario) -> None:
    base = scenario.base()
    head = scenario.work.commit({"clusters/prod/notes.txt": "todo\n"})
    payload = scenario.merge_request(12, head, base)
    scenario.fake.inject(method="POST", path=r"/api/v4/projects/\d+/statuses/.*", status=502)
    scenario.fake.inject_rate_limit(
        method="POST", path=r"/api/v4/projects/\d+/merge_requests/\d+/notes"
    )
    scenario.deliver(payload)
    scenario.work_once()
    states = scenario.states(head)
    assert states[-1] == "failed"
    # Never the same transition twice.
    assert all(a != b for a, b in itertools.pairwise(states))
    scenario.fake.assert_clean()


def test_g_only_the_newest_head_is_reported(scenario: GitLabScenario) -> None:
    base = scenario.base()
    old = scenario.work.commit({"clusters/prod/notes.txt": "todo\n"})
    scenario.deliver(scenario.merge_request(13, old, base))
    new = scenario.work.commit({"clusters/prod/notes.txt": None})
    scenario.deliver(scenario.merge_request(13, new, base))
    scenario.work_once()
    assert scenario.states(old) == []
    assert scenario.states(new)[-1] == "success"
    scenario.fake.assert_clean()


def test_three_pushes_leave_one_summary_and_no_duplicate_discussions(
    scenario: GitLabScenario,
) -> None:
    base = scenario.base()
    pid = scenario.project_id
    calls: list[list[str]] = []
    heads = []
    for files in THREE_PUSHES:
        head = scenario.work.commit(files)
        heads.append(head)
        scenario.fake.reset_calls()
        scenario.deliver(scenario.merge_request(14, head, base))
        scenario.work_once()
        calls.append(
            [
                re.sub(r"/discussions/[0-9a-f]{40}", "/discussions/<id>", c)
                for c in scenario.fake.calls_summary()
            ]
        )
    (note,) = scenario.summary(14)
    assert "All clear" in note["body"]
    discussions = scenario.line_discussions(14)
    assert sorted(d["notes"][0]["position"]["new_path"] for d in discussions) == [
        "clusters/prod/more.txt",
        "clusters/prod/notes.txt",
        "clusters/prod/v1/secrets/web/db.yaml",
    ]  # each finding commented once across the three pushes, every one resolved now
    assert all(d["notes"][0]["resolved"] for d in discussions)
    api = f"/api/v4/projects/{pid}"
    mr = f"{api}/merge_requests/14"

    def push(head: str, note: str, lines: list[str]) -> list[str]:
        return [
            f"POST {api}/statuses/{head} 201",  # running
            "GET /api/v4/user 200",
            f"GET {mr}/notes 200",
            note,
            f"POST {api}/statuses/{head} 201",  # the verdict, linking to the note
            f"GET {mr}/versions 200",
            f"GET {mr}/discussions 200",
            *lines,
        ]

    assert calls == [
        # Two findings: the summary note and one discussion each.
        push(heads[0], f"POST {mr}/notes 201", [f"POST {mr}/discussions 201"] * 2),
        # notes.txt fixed, more.txt new: the note edited, one new discussion, one resolved.
        push(
            heads[1],
            f"PUT {mr}/notes/1 200",
            [f"POST {mr}/discussions 201", f"PUT {mr}/discussions/<id> 200"],
        ),
        # All clear: the note edited, the two remaining discussions resolved.
        push(heads[2], f"PUT {mr}/notes/1 200", [f"PUT {mr}/discussions/<id> 200"] * 2),
    ]
    for head in heads:
        states = scenario.states(head)
        assert states[-1] in FINAL
        assert all(a != b for a, b in itertools.pairwise(states))
    scenario.fake.assert_clean()
