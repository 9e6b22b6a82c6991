"""The GitLab comment-command scenario of :mod:`tests.e2e.test_gitlab_commands`: a repository
with a ``strict`` target (prod) and a relaxed one (staging), ``commands.min_permission:
write``, and three members: ``alice`` (the merge requests' author, Developer: write),
``maintainer`` (Maintainer) and ``reader`` (Reporter: read); the ``Note Hook`` GitLab sends
for a note, and what the bot answered."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.approvals.approval import Approval
from bot.state.base import pull_key
from bot.state.redis_state import RedisApprovals
from tests.e2e.harness import ROOT, Bot, WorkerRun
from tests.e2e.test_gitlab_checks import GitLabScenario
from tests.fakeforge.gitlab import FakeGitLab
from tests.support.gitops import configmap

NOTE_FIXTURE = ROOT / "fixtures/webhooks/gitlab/note__merge_request-go-gitlab.json"
CONFIG = """version: 1
targets:
  - {name: prod, path: clusters/prod, mode: strict}
  - {name: staging, path: clusters/staging}
commands:
  min_permission: write
"""
TWO_NEW = {
    "clusters/prod/v1/configmaps/web/alpha.yaml": configmap("alpha"),
    "clusters/prod/v1/configmaps/web/beta.yaml": configmap("beta"),
}
WAITING_TWO = "2 new objects in prod wait for /approve"
MARKER = re.compile(r"<!-- ichor:approval v1 ([A-Za-z0-9_-]+={0,2}) -->")
# How the summary names the approver (a zero-width space keeps it from mentioning them).
APPROVED_BY = "approved by @&#8203;maintainer"
AUTHOR, MAINTAINER, READER = "alice", "maintainer", "reader"


def forget_commands_state(bot: Bot) -> None:
    """What the command jobs kept in Redis for the bot's repositories (the
    harness cleans the check's own keys)."""
    keys: list[Any] = []
    for name in bot.repositories:
        keys += bot.redis.scan_iter(f"ichor:approvals:gitlab:{name}:*", count=1000)
        keys += bot.redis.scan_iter(f"ichor:permission:gitlab:{name}:*", count=1000)
    if keys:
        bot.redis.delete(*keys)


class CommandScenario(GitLabScenario):
    def __init__(self, fake: FakeGitLab, bot: Bot, tmp_path: Path) -> None:
        super().__init__(fake, bot, tmp_path)
        self.api = f"/api/v4/projects/{self.project_id}"
        self.ids = {
            AUTHOR: fake.add_member(self.full_name, AUTHOR, 30),
            MAINTAINER: fake.add_member(self.full_name, MAINTAINER, 40),
            READER: fake.add_member(self.full_name, READER, 20),
        }
        self.runs: list[WorkerRun] = []

    def mr(self, iid: int) -> str:
        return f"{self.api}/merge_requests/{iid}"

    def open(self, iid: int, files: Mapping[str, str | None]) -> str:
        """A merge request of ``files`` on the strict base, checked once; its head."""
        base = self.base({".ichor.yaml": CONFIG})
        head = self.work.commit(files)
        self.deliver(self.merge_request(iid, head, base))
        self.work_once()
        return head

    def push(self, iid: int, files: Mapping[str, str | None]) -> str:
        head = self.work.commit(files)
        self.fake.reset_calls()
        self.deliver(self.merge_request(iid, head, self.heads[iid]))
        self.work_once()
        return head

    def note_hook(
        self, iid: int, note: dict[str, Any], author: str, *, action: str = "create"
    ) -> dict[str, Any]:
        """The ``Note Hook`` GitLab sends for ``note`` on the merge request."""
        payload: dict[str, Any] = copy.deepcopy(json.loads(NOTE_FIXTURE.read_text()))
        project = payload["project"]
        name = self.full_name.split("/")[1]
        web = f"{self.fake.url}/{self.full_name}"
        clone = self.fake.clone_url(self.full_name)
        project.update(
            id=self.project_id,
            name=name,
            path_with_namespace=self.full_name,
            web_url=web,
            homepage=web,
            git_http_url=clone,
            http_url=clone,
            url=clone,
            default_branch="main",
        )
        payload["project_id"] = self.project_id
        payload["repository"].update(name=name, url=clone, homepage=web)
        payload["user"].update(id=self.fake.add_user(author), username=author, name=author)
        attributes = payload["object_attributes"]
        attributes.update(
            id=note["id"],
            note=note["body"],
            action=action,
            author_id=note["author"]["id"],
            created_at=note["created_at"],
            project_id=self.project_id,
            url=f"{web}/-/merge_requests/{iid}#note_{note['id']}",
        )
        payload["merge_request"].update(
            iid=iid,
            source_project_id=self.project_id,
            target_project_id=self.project_id,
            source_branch="feature",
            target_branch="main",
            source=project,
            target=project,
        )
        payload["merge_request"]["last_commit"]["id"] = self.heads[iid]
        return payload

    def comment(self, iid: int, body: str, author: str) -> dict[str, Any]:
        """``author`` comments ``body`` on the merge request; the bot handles the hook."""
        note = self.fake.add_note(self.full_name, iid, body, author=author)
        self.fake.reset_calls()
        assert self.hook(iid, note, author) == 202
        self.work_once()
        return note

    def work_once(self) -> WorkerRun:
        run = super().work_once()
        self.runs.append(run)
        assert self.fake.token not in run.log
        return run

    def replies(self, iid: int, after: int) -> list[dict[str, Any]]:
        """The bot's notes after note ``after`` that are not its summary."""
        return [
            n
            for n in self.fake.notes(self.full_name, iid)
            if n["id"] > after
            and n["author"]["username"] == self.fake.bot_username
            and "ichor:summary" not in n["body"]
        ]

    def status(self, sha: str) -> dict[str, Any]:
        """The newest ``ichor/acceptance`` status of ``sha``."""
        statuses = self.fake.statuses(self.full_name, sha)
        mine = [s for s in statuses if s["name"] == "ichor/acceptance"]
        assert mine, f"no status on {sha}"
        return mine[-1]

    def approvals(self, iid: int) -> tuple[Approval, ...] | None:
        """What the bot's approval store holds for the merge request."""
        store = RedisApprovals(self.bot.redis)
        return store.approvals(pull_key("gitlab", self.full_name, iid))

    def hook(self, iid: int, note: dict[str, Any], author: str, action: str = "create") -> int:
        payload = self.note_hook(iid, note, author, action=action)
        return self.bot.post("Note Hook", payload, forge="gitlab")

    def status_count(self, sha: str) -> int:
        return len(self.states(sha))

    def awards(self, iid: int, note: dict[str, Any]) -> list[str]:
        return [a["name"] for a in self.fake.awards(self.full_name, iid, note["id"])]

    def finish(self) -> None:
        self.fake.assert_clean()
        for run in self.runs:
            assert self.fake.token not in run.log
