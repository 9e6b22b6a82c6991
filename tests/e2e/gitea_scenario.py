"""A repository on the fake Gitea (or Forgejo) for the end-to-end tests: its commits, its pull
requests and comments, the signed webhooks that announce them, and one worker run at a time.

Shared by the checks and the comment-command end-to-end tests.
"""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

from tests.e2e.harness import ROOT, Bot, WorkerRun
from tests.fakeforge.gitea import FakeGitea
from tests.support.gitops import base_files
from tests.support.gitrepo import WorkRepo

PR_FIXTURE = ROOT / "fixtures/webhooks/gitea/pull_request__synchronized.json"
COMMENT_FIXTURE = ROOT / "fixtures/webhooks/gitea/issue_comment__created-on-pr-go-scm-old.json"


def _point_repository(payload: dict[str, Any], fake: FakeGitea, full_name: str) -> dict[str, Any]:
    owner, name = full_name.split("/")
    repo: dict[str, Any] = payload["repository"]
    repo.update(
        full_name=full_name,
        name=name,
        clone_url=fake.clone_url(full_name),
        html_url=f"{fake.url}/{full_name}",
        id=6,
        default_branch="main",  # the recorded delivery's repository says "master"
    )
    repo["owner"]["login"] = owner
    return repo


def gitea_payload(
    fake: FakeGitea, full_name: str, number: int, head: str, base: str, fork: str | None = None
) -> dict[str, Any]:
    payload: dict[str, Any] = copy.deepcopy(json.loads(PR_FIXTURE.read_text()))
    repo = _point_repository(payload, fake, full_name)
    payload["number"] = number
    pr = payload["pull_request"]
    pr["number"] = number
    pr["head"].update(sha=head, ref="feature", label="feature", repo_id=7 if fork else 6)
    pr["base"].update(sha=base, ref="main", label="main", repo_id=6)
    pr["head"]["repo"] = {
        **copy.deepcopy(repo),
        "full_name": fork or full_name,
        "id": 7 if fork else 6,
    }
    pr["base"]["repo"] = copy.deepcopy(repo)
    return payload


def comment_payload(
    fake: FakeGitea, full_name: str, comment: dict[str, Any], *, action: str = "created"
) -> dict[str, Any]:
    """The ``issue_comment`` delivery for ``comment`` (as the fake renders it) on its PR."""
    payload: dict[str, Any] = copy.deepcopy(json.loads(COMMENT_FIXTURE.read_text()))
    _point_repository(payload, fake, full_name)
    number = int(comment["pull_request_url"].rsplit("/", 1)[1])
    payload["action"] = action
    payload["issue"]["number"] = number
    payload["comment"] = {
        **payload["comment"],
        "id": comment["id"],
        "html_url": comment["html_url"],
        "body": comment["body"],
        "user": comment["user"],
        "created_at": comment["created_at"],
        "updated_at": comment["updated_at"],
    }
    payload["sender"] = comment["user"]
    return payload


class GiteaScenario:
    def __init__(self, fake: FakeGitea, bot: Bot, tmp_path: Path) -> None:
        self.fake = fake
        self.bot = bot
        self.full_name = f"e2e-{uuid.uuid4().hex[:8]}/gitops"
        bot.repositories.add(self.full_name)
        self.work = WorkRepo(tmp_path / "work")
        self.data_dir = tmp_path / "worker-data"
        fake.add_repo(self.full_name)
        self.bare = fake.make_bare_repo(self.full_name)
        self.runs: list[WorkerRun] = []

    def base(self, extra: dict[str, str | None] | None = None) -> str:
        files = base_files()
        return self.work.commit({**files, **(extra or {})}, "base")

    def pull(self, number: int, head: str, base: str, *, fork: str | None = None) -> dict[str, Any]:
        self.work.set_ref(f"refs/pull/{number}/head", head)
        self.work.publish(self.bare)
        existing = {p["number"] for p in self.fake.pulls(self.full_name)}
        if number in existing:
            self.fake.update_pull(self.full_name, number, head_sha=head)
        else:
            self.fake.add_pull(self.full_name, number, head_sha=head, base_sha=base, head_repo=fork)
        return gitea_payload(self.fake, self.full_name, number, head, base, fork)

    def deliver(self, payload: dict[str, Any]) -> None:
        assert self.bot.post("pull_request", payload, forge=self.fake.flavor) == 202

    def comment(self, number: int, body: str, *, user: str) -> dict[str, Any]:
        """``user`` comments ``body`` on the pull request, and the webhook says so."""
        comment = self.fake.add_comment(self.full_name, number, body, user=user)
        self.deliver_comment(comment)
        return comment

    def deliver_comment(self, comment: dict[str, Any], *, action: str = "created") -> int:
        payload = comment_payload(self.fake, self.full_name, comment, action=action)
        return self.bot.post("issue_comment", payload, forge=self.fake.flavor)

    def work_once(self) -> WorkerRun:
        run = self.bot.run_worker(self.fake.env(), self.data_dir)
        assert run.code == 0, run.log
        self.runs.append(run)
        return run

    def states(self, sha: str) -> list[str]:
        return [s["status"] for s in self.fake.statuses(self.full_name, sha)]

    def summary(self, number: int) -> list[dict[str, Any]]:
        return [
            c for c in self.fake.comments(self.full_name, number) if "ichor:summary" in c["body"]
        ]
