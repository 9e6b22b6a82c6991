"""End to end on GitHub: a signed ``pull_request`` webhook → ``ichor-bot serve`` → Redis → a real
``ichor-bot worker`` → the fake GitHub (every request validated against GitHub's OpenAPI
description) and git over smart HTTP with the installation token."""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.harness import Bot, WorkerRun, pull_request_payload, running_bot
from tests.fakeforge import FakeGitHub
from tests.fakeforge.fixtures import fake_github  # noqa: F401 - the fixture
from tests.support.gitops import SECRET, THREE_PUSHES, base_files, configmap
from tests.support.gitrepo import WorkRepo

TOKEN_CALL = "POST /app/installations/42/access_tokens 201"


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


class Scenario:
    """One repository on the fake forge, its work repository, and the worker's data dir."""

    def __init__(self, fake: FakeGitHub, bot: Bot, tmp_path: Path) -> None:
        self.fake = fake
        self.bot = bot
        self.full_name = f"e2e-{uuid.uuid4().hex[:8]}/gitops"
        bot.repositories.add(self.full_name)
        self.work = WorkRepo(tmp_path / "work")
        self.data_dir = tmp_path / "worker-data"
        self.bare: Path | None = None
        fake.add_repo(self.full_name, installation_id=42)

    def base(self, extra: dict[str, str | None] | None = None) -> str:
        return self.work.commit({**base_files(), **(extra or {})}, "base")

    def publish(self) -> None:
        """Push every ref of the work repository to the forge's bare repository."""
        if self.bare is None:
            self.bare = self.fake.make_bare_repo(self.full_name)
        self.work.publish(self.bare)

    def pull(self, number: int, head: str, base: str, *, fork: str | None = None) -> dict[str, Any]:
        """Make ``head`` the pull request's head (``refs/pull/N/head`` on the forge)."""
        self.work.set_ref(f"refs/pull/{number}/head", head)
        self.publish()
        self.fake.add_pull(self.full_name, number, head_sha=head, base_sha=base, head_repo=fork)
        return pull_request_payload(
            full_name=self.full_name,
            clone_url=self.fake.clone_url(self.full_name),
            number=number,
            head_sha=head,
            base_sha=base,
            fork=fork,
        )

    def deliver(self, payload: dict[str, Any]) -> None:
        assert self.bot.post("pull_request", payload) == 202

    def work_once(self) -> WorkerRun:
        run = self.bot.run_worker(self.fake.env(), self.data_dir)
        assert run.code == 0, run.log
        return run

    def check_runs(self) -> list[dict[str, Any]]:
        runs: list[dict[str, Any]] = self.fake.check_runs(self.full_name)
        return runs

    def only_check_run(self) -> dict[str, Any]:
        runs = self.check_runs()
        assert len(runs) == 1, runs
        return runs[0]

    def assert_clean(self) -> None:
        assert self.fake.validation_errors == []
        assert self.fake.auth_failures == []


@pytest.fixture
def scenario(fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> Scenario:  # noqa: F811
    return Scenario(fake_github, bot, tmp_path)


def annotation_titles(run: dict[str, Any]) -> list[str]:
    return sorted(a["title"] for a in run["output"].get("annotations", []))


def test_a_clean_pull_request_succeeds_in_three_calls(scenario: Scenario) -> None:
    base = scenario.base()
    head = scenario.work.commit({"clusters/prod/v1/configmaps/web/extra.yaml": configmap("extra")})
    scenario.deliver(scenario.pull(7, head, base))
    scenario.work_once()
    name = scenario.full_name
    assert scenario.fake.calls_summary() == [
        TOKEN_CALL,
        f"POST /repos/{name}/check-runs 201",
        f"PATCH /repos/{name}/check-runs/1 200",
    ]
    run = scenario.only_check_run()
    assert (run["name"], run["head_sha"], run["status"]) == ("ichor/acceptance", head, "completed")
    assert run["conclusion"] == "success"
    assert f"github-{run['external_id']}" == scenario.bot.deliveries[-1]
    assert annotation_titles(run) == []
    create = scenario.fake.calls[1].json
    assert create["status"] == "in_progress"
    scenario.assert_clean()


def test_b_foreign_file_and_plaintext_secret_fail_with_annotations(scenario: Scenario) -> None:
    base = scenario.base()
    head = scenario.work.commit(
        {"clusters/prod/notes.txt": "todo\n", "clusters/prod/v1/secrets/web/db.yaml": SECRET}
    )
    scenario.deliver(scenario.pull(8, head, base))
    run_log = scenario.work_once()
    run = scenario.only_check_run()
    assert run["conclusion"] == "failure"
    assert run["output"]["title"] == "1 target refused · 2 new issues"
    assert annotation_titles(run) == ["foreign-file", "plaintext-secret"]
    secret = next(a for a in run["output"]["annotations"] if a["title"] == "plaintext-secret")
    assert secret["path"] == "clusters/prod/v1/secrets/web/db.yaml"
    assert secret["annotation_level"] == "failure"
    assert "staging" in run["output"]["summary"]  # not touched, named as such
    scenario.assert_clean()
    _assert_token_never_leaked(scenario, run_log)
    _assert_on_the_status_page(scenario, 8, head)


def _assert_on_the_status_page(scenario: Scenario, number: int, head: str) -> None:
    """The worker kept the check in Redis; the web process lists it and what GitHub got."""
    page = httpx.get(scenario.bot.url + "/", timeout=10).text
    assert f'/pull/{number}">#{number}</a>' in page
    assert f'/commit/{head}">{head[:12]}</a>' in page
    assert "1 target refused · 2 new issues" in page
    link = re.search(r'href="(/checks/[0-9a-f]{24})"', page)
    assert link is not None
    detail = httpx.get(scenario.bot.url + link.group(1), timeout=10).text
    assert "clusters/prod/v1/secrets/web/db.yaml" in detail and "plaintext-secret" in detail


def test_c_issues_already_on_base_are_marked_existing(scenario: Scenario) -> None:
    base = scenario.base({"clusters/prod/old-notes.txt": "old\n"})
    head = scenario.work.commit({"clusters/prod/new-notes.txt": "new\n"})
    scenario.deliver(scenario.pull(9, head, base))
    scenario.work_once()
    run = scenario.only_check_run()
    assert run["conclusion"] == "failure"
    assert run["output"]["title"] == "1 target refused · 1 new issue, 1 already on base"
    # Only the file the pull request changed is annotated; the old one is in the summary.
    assert [a["path"] for a in run["output"]["annotations"]] == ["clusters/prod/new-notes.txt"]
    assert "old-notes.txt" in run["output"]["summary"]
    scenario.assert_clean()


def test_d_pull_request_from_a_fork_is_fetched_from_the_base_repository(
    scenario: Scenario,
) -> None:
    base = scenario.base()
    scenario.publish()
    # The fork's commit exists on the forge only as refs/pull/10/head, never as a branch.
    scenario.work.checkout("fork-feature", create_from=base)
    head = scenario.work.commit({"clusters/prod/v1/secrets/web/db.yaml": SECRET})
    scenario.work.checkout("main")
    scenario.work.git("branch", "-D", "fork-feature")
    payload = scenario.pull(10, head, base, fork="forker/gitops")
    scenario.deliver(payload)
    run = scenario.work_once()
    check = scenario.only_check_run()
    assert check["conclusion"] == "failure"
    assert annotation_titles(check) == ["plaintext-secret"]
    # Every git request went to the base repository on the forge.
    paths = {r.path for r in scenario.fake.git.requests}
    assert paths and all(p.startswith(f"/{scenario.full_name}.git/") for p in paths)
    assert not any("forks.invalid" in " ".join(argv) for argv in run.git_argvs())
    scenario.assert_clean()


def test_e_more_than_fifty_issues_are_annotated_in_batches(scenario: Scenario) -> None:
    base = scenario.base()
    files: dict[str, str | None] = {f"clusters/prod/junk-{n:03}.txt": "x\n" for n in range(120)}
    head = scenario.work.commit(files)
    scenario.deliver(scenario.pull(11, head, base))
    scenario.work_once()
    name = scenario.full_name
    calls = scenario.fake.calls_summary()
    assert calls[:2] == [TOKEN_CALL, f"POST /repos/{name}/check-runs 201"]
    assert calls[2:5] == [f"PATCH /repos/{name}/check-runs/1 200"] * 3
    sizes = [len(c.json["output"]["annotations"]) for c in scenario.fake.calls[2:5]]
    assert sizes == [50, 50, 20]
    # Then line comments: one review carrying at most 30 of them, the rest in the summary.
    assert calls[5:] == [
        f"GET /repos/{name}/pulls/11/comments 200",
        f"POST /repos/{name}/pulls/11/reviews 200",
    ]
    assert len(scenario.fake.calls[6].json["comments"]) == 30
    run = scenario.only_check_run()
    assert run["conclusion"] == "failure"
    assert len(run["output"]["annotations"]) == 120
    scenario.assert_clean()


def test_f_a_502_and_a_429_succeed_on_retry(scenario: Scenario) -> None:
    base = scenario.base()
    head = scenario.work.commit({"clusters/prod/notes.txt": "todo\n"})
    payload = scenario.pull(12, head, base)
    scenario.fake.inject(method="POST", path=r"/repos/.*/check-runs", status=502, times=1)
    scenario.fake.inject(
        method="PATCH",
        path=r"/repos/.*/check-runs/\d+",
        status=429,
        headers={"retry-after": "1"},
        times=1,
    )
    scenario.deliver(payload)
    run_log = scenario.work_once()
    name = scenario.full_name
    assert scenario.fake.calls_summary() == [
        TOKEN_CALL,
        f"POST /repos/{name}/check-runs 502",
        f"POST /repos/{name}/check-runs 201",
        f"PATCH /repos/{name}/check-runs/1 429",
        f"PATCH /repos/{name}/check-runs/1 200",
        f"GET /repos/{name}/pulls/12/comments 200",
        f"POST /repos/{name}/pulls/12/reviews 200",
    ]
    assert scenario.only_check_run()["conclusion"] == "failure"
    assert "502" in run_log.log and "429" in run_log.log  # each retry is logged
    scenario.assert_clean()


def test_g_only_the_newest_head_is_reported(scenario: Scenario) -> None:
    base = scenario.base()
    old = scenario.work.commit({"clusters/prod/notes.txt": "todo\n"})
    first = scenario.pull(13, old, base)
    scenario.deliver(first)
    new = scenario.work.commit({"clusters/prod/notes.txt": None})
    second = scenario.pull(13, new, base)
    scenario.deliver(second)
    scenario.work_once()  # both jobs run now; the first one is stale
    run = scenario.only_check_run()
    assert (run["head_sha"], run["conclusion"]) == (new, "success")
    scenario.assert_clean()


def _assert_token_never_leaked(scenario: Scenario, run: WorkerRun) -> None:
    tokens = [t for t in scenario.fake.tokens]
    assert tokens, "the worker asked for no token"
    forms = set()
    for token in tokens:
        forms |= {token, base64.b64encode(f"x-access-token:{token}".encode()).decode()}
    # Logs, and the argv of every git process the worker started.
    for form in forms:
        assert form not in run.log
        for argv in run.git_argvs():
            assert all(form not in a for a in argv)
    assert run.git_argvs(), "the shim recorded no git process"
    # Anything on disk: mirrors (their config), facts, FETCH_HEAD, logs.
    for path in scenario.data_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert all(form.encode() not in data for form in forms), path
    # Anything posted to the forge.
    for call in scenario.fake.calls:
        text = json.dumps(call.json) + (call.body.decode(errors="replace") if call.body else "")
        assert all(form not in text for form in forms), call.path


def test_a_rerequested_check_runs_again_against_its_pull_requests_base(
    scenario: Scenario,
) -> None:
    base = scenario.base({"clusters/prod/old-notes.txt": "old\n"})
    head = scenario.work.commit({"clusters/prod/new-notes.txt": "new\n"})
    scenario.deliver(scenario.pull(14, head, base))
    scenario.work_once()
    payload = json.loads(
        (
            Path(__file__).parents[2] / "fixtures/webhooks/github/check_suite__rerequested.json"
        ).read_text()
    )
    clone_url = scenario.fake.clone_url(scenario.full_name)
    # Every URL of the repository names it: one naming another is refused at ingress.
    payload["repository"].update(
        full_name=scenario.full_name, clone_url=clone_url, html_url=clone_url.removesuffix(".git")
    )
    payload["installation"] = {"id": 42}
    suite = payload["check_suite"]
    suite["head_sha"] = head
    suite["pull_requests"][0]["number"] = 14
    suite["pull_requests"][0]["head"]["sha"] = head
    assert scenario.bot.post("check_suite", payload) == 202
    scenario.fake.reset_calls()
    scenario.work_once()
    name = scenario.full_name
    assert scenario.fake.calls_summary() == [
        TOKEN_CALL,  # a new worker process: its token cache starts empty
        f"GET /repos/{name}/pulls/14 200",
        f"POST /repos/{name}/check-runs 201",
        f"PATCH /repos/{name}/check-runs/2 200",
        # The finding was commented on the first run: looked at, not posted again.
        f"GET /repos/{name}/pulls/14/comments 200",
    ]
    runs = scenario.check_runs()
    assert [r["output"]["title"] for r in runs] == [
        "1 target refused · 1 new issue, 1 already on base"
    ] * 2
    scenario.assert_clean()


def test_a_check_that_cannot_run_says_why_and_is_never_left_in_progress(
    scenario: Scenario,
) -> None:
    base = scenario.base()
    head = scenario.work.commit({"clusters/prod/notes.txt": "todo\n"})
    payload = scenario.pull(15, head, base)
    assert scenario.bare is not None
    scenario.deliver(payload)
    # The repository disappears from git hosting (a permanent failure: 404 on fetch).
    scenario.bare.rename(scenario.bare.with_name(scenario.bare.name + "-gone"))
    run = scenario.work_once()
    check = scenario.only_check_run()
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert "could not be completed" in check["output"]["title"].lower()
    assert "could not be completed" in run.log
    scenario.assert_clean()


def test_three_pushes_leave_one_summary_and_no_duplicate_line_comments(
    scenario: Scenario,
) -> None:
    base = scenario.base()
    env = {**scenario.fake.env(), "ICHOR_GITHUB_SUMMARY_COMMENT": "true"}
    calls: list[list[str]] = []
    heads: list[str] = []
    for n, files in enumerate(THREE_PUSHES, start=1):
        heads.append(scenario.work.commit(files))
        payload = scenario.pull(16, heads[-1], base)
        if n > 1:
            scenario.fake.update_pull(scenario.full_name, 16, head_sha=heads[-1])
        scenario.fake.reset_calls()
        scenario.deliver(payload)
        run = scenario.bot.run_worker(env, scenario.data_dir)
        assert run.code == 0, run.log
        calls.append(scenario.fake.calls_summary())
    repo = f"/repos/{scenario.full_name}"

    def push(run: int, comment: str, lines: list[str]) -> list[str]:
        return [
            TOKEN_CALL,  # each push here is a new worker process
            f"POST {repo}/check-runs 201",
            f"GET {repo}/issues/16/comments 200",
            comment,
            f"PATCH {repo}/check-runs/{run} 200",
            f"GET {repo}/pulls/16/comments 200",
            *lines,
        ]

    assert calls == [
        push(1, f"POST {repo}/issues/16/comments 201", [f"POST {repo}/pulls/16/reviews 200"]),
        # notes.txt fixed (its comment marked so), more.txt new (one more review).
        push(
            2,
            f"PATCH {repo}/issues/comments/1 200",
            [f"POST {repo}/pulls/16/reviews 200", f"PATCH {repo}/pulls/comments/1 200"],
        ),
        push(
            3,
            f"PATCH {repo}/issues/comments/1 200",
            [f"PATCH {repo}/pulls/comments/{n} 200" for n in (2, 3)],
        ),
    ]
    (summary,) = scenario.fake.comments(scenario.full_name, 16)
    assert "All clear" in summary["body"]
    comments = scenario.fake.review_comments(scenario.full_name, 16)
    assert sorted(c["path"] for c in comments) == [
        "clusters/prod/more.txt",
        "clusters/prod/notes.txt",
        "clusters/prod/v1/secrets/web/db.yaml",
    ]
    assert all("Fixed in" in c["body"] for c in comments)
    scenario.assert_clean()
