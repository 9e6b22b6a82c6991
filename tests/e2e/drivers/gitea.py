"""The Gitea driver, for Gitea and Forgejo (``flavor``): a repository on the fake Gitea (every
request validated against the flavor's recorded Swagger description). The verdict is the
``ichor/acceptance`` commit status; line comments are review comments; the webhooks carry
Gitea's or Forgejo's headers."""

from __future__ import annotations

import base64
import copy
import json
import re
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from tests.e2e.drivers.forge import (
    AUTHOR,
    MAINTAINER,
    READER,
    GitHubShaped,
    LineComment,
    Pull,
)
from tests.e2e.harness import ROOT, Bot
from tests.fakeforge.gitea import FakeGitea

PR_FIXTURE = ROOT / "fixtures/webhooks/gitea/pull_request__synchronized.json"
COMMENT_FIXTURE = ROOT / "fixtures/webhooks/gitea/issue_comment__created-on-pr-go-scm-old.json"
PUSH_FIXTURE = ROOT / "fixtures/webhooks/gitea/push__branch.json"
FORK = "forker/gitops"
# The look-up of the open pull request by base and head branch.
LOOKUP = re.compile(r"/api/v1/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<base>[^/]+)/(?P<head>[^/]+)")


class Gitea(GitHubShaped):
    route = "gitea"
    PASSED, FAILED, WAITING = "success", "failure", "failure"

    def __init__(self, fake: FakeGitea, bot: Bot, tmp_path: Path, number: int = 7) -> None:
        super().__init__(bot, tmp_path, number)
        self.fake = fake
        self.kind = fake.flavor  # gitea or forgejo
        self.bot_name = fake.bot_login
        self.identity = f"{fake.bot_login} <{fake.bot_login}@users.noreply.127.0.0.1>"
        fake.add_repo(self.full_name)
        self.bare = fake.make_bare_repo(self.full_name)
        for user, permission in ((AUTHOR, "write"), (MAINTAINER, "write"), (READER, "read")):
            fake.set_permission(self.full_name, user, permission)
        self.api = GiteaApi(self)

    # ------------------------------------------------------------ webhooks
    def _point(self, payload: dict[str, Any]) -> dict[str, Any]:
        owner, name = self.full_name.split("/")
        repo: dict[str, Any] = payload["repository"]
        repo.update(
            full_name=self.full_name,
            name=name,
            clone_url=self.fake.clone_url(self.full_name),
            html_url=f"{self.fake.url}/{self.full_name}",
            id=6,
            default_branch="main",  # the recorded deliveries' repository says "master"
        )
        repo["owner"]["login"] = owner
        return repo

    def _pull_request(self, number: int, head: str, base: str, fork: bool) -> dict[str, Any]:
        self.local.set_ref(f"refs/pull/{number}/head", head)
        self.publish()
        if any(p["number"] == number for p in self.fake.pulls(self.full_name)):
            self.fake.update_pull(self.full_name, number, head_sha=head)
        else:
            self.fake.add_pull(
                self.full_name,
                number,
                head_sha=head,
                base_sha=base,
                head_repo=FORK if fork else None,
            )
        payload: dict[str, Any] = copy.deepcopy(json.loads(PR_FIXTURE.read_text()))
        repo = self._point(payload)
        payload["number"] = number
        pr = payload["pull_request"]
        pr["number"] = number
        pr["head"].update(sha=head, ref="feature", label="feature", repo_id=7 if fork else 6)
        pr["base"].update(sha=base, ref="main", label="main", repo_id=6)
        pr["head"]["repo"] = {
            **copy.deepcopy(repo),
            "full_name": FORK if fork else self.full_name,
            "id": 7 if fork else 6,
        }
        pr["base"]["repo"] = copy.deepcopy(repo)
        return payload

    def deliver(self, payload: dict[str, Any]) -> None:
        assert self.bot.post("pull_request", payload, forge=self.kind) == 202

    def _add_comment(self, number: int, body: str, user: str) -> Any:
        comment = self.fake.add_comment(self.full_name, number, body, user=user)
        return {**comment, "number": number}

    def edit_comment(self, comment: Any, body: str) -> Any:
        return {**self.fake.edit_comment(comment["id"], body), "number": comment["number"]}

    def deliver_comment(self, comment: Any, *, action: str = "created") -> int:
        """The ``issue_comment`` delivery for ``comment`` (as the fake renders it)."""
        payload: dict[str, Any] = copy.deepcopy(json.loads(COMMENT_FIXTURE.read_text()))
        self._point(payload)
        payload["action"] = action
        payload["issue"]["number"] = comment["number"]
        payload["comment"] = {
            **payload["comment"],
            **{k: comment[k] for k in ("id", "html_url", "body", "user", "created_at")},
            "updated_at": comment["updated_at"],
        }
        payload["sender"] = comment["user"]
        return self.bot.post("issue_comment", payload, forge=self.kind)

    def deliver_push(self, before: str, after: str, ref: str = "refs/heads/main") -> None:
        payload: dict[str, Any] = copy.deepcopy(json.loads(PUSH_FIXTURE.read_text()))
        self._point(payload)
        payload.update(ref=ref, before=before, after=after)
        assert self.bot.post("push", payload, forge=self.kind) == 202

    def deliver_repository_created(self) -> None:
        """An organisation's webhook: ``repository`` ``created``, with the push delivery's
        repository and sender objects."""
        pushed: dict[str, Any] = copy.deepcopy(json.loads(PUSH_FIXTURE.read_text()))
        payload = {"action": "created", "repository": pushed["repository"]}
        payload["sender"] = pushed["sender"]
        self._point(payload)
        assert self.bot.post("repository", payload, forge=self.kind) == 202

    # ------------------------------------------------------------ what the forge holds
    def verdict(self, sha: str | None = None) -> tuple[str, str]:
        statuses = self.fake.statuses(self.full_name, sha or self.head)
        assert statuses, f"no status on {sha or self.head}"
        return statuses[-1]["status"], statuses[-1]["description"]

    def states(self, sha: str) -> list[str]:
        return [s["status"] for s in self.fake.statuses(self.full_name, sha)]

    def checked(self, *finals: str) -> list[str]:
        return [state for final in finals for state in ("pending", final)]

    def check_names(self, sha: str) -> set[str]:
        return {s["context"] for s in self.fake.statuses(self.full_name, sha)}

    def verdict_url(self, sha: str) -> str | None:
        url: str | None = self.fake.statuses(self.full_name, sha)[-1]["target_url"]
        return url

    def flaky(self) -> None:
        self.fake.inject(method="POST", path=r"/api/v1/repos/.*/statuses/.*", status=502, times=1)
        self.fake.inject(
            method="POST",
            path=r"/api/v1/repos/.*/issues/\d+/comments",
            status=429,
            headers={"retry-after": "1"},
            times=1,
        )

    def reactions(self, comment: Any) -> list[str]:
        found = self.fake.reactions(self.full_name, comment["id"])
        return [r["content"] for r in found if r["user"] == self.bot_name]

    def line_comments(self, number: int | None = None) -> list[LineComment]:
        return [
            LineComment(c["path"], c["body"], bool(c.get("resolver")))
            for c in self.fake.review_comments(self.full_name, number or self.number)
        ]

    def plant(self, branch: str, body: str, *, sha: str | None = None, state: str = "open") -> Pull:
        sha = sha or self.rev("main")
        self.move(branch, sha)
        user = self.bot_name
        pull = self.fake.add_pull(
            self.full_name, head_sha=sha, head_ref=branch, body=body, user=user, state=state
        )
        return Pull.of(pull)

    def lookups(self) -> list[tuple[str, str]]:
        found = (LOOKUP.fullmatch(c.path) for c in self.fake.calls if c.method == "GET")
        return [(unquote(m["head"]), m["base"]) for m in found if m and m["repo"] == self.full_name]

    # ------------------------------------------------------------ faults
    def fail_pull_lookups(self, status: int) -> None:
        path = rf"/api/v1/repos/{re.escape(self.full_name)}/pulls/main/.+"
        self.fake.inject("GET", path, status=status, headers={"retry-after": "0"}, times=None)

    def fail_permission_lookups(self, status: int, user: str) -> None:
        if status == 403:
            self.fake.forbid_permission_reads(self.full_name)  # the token is no repo admin
        else:  # down on every attempt; Retry-After 0 keeps the adapter's retries fast
            path = f"/api/v1/repos/{self.full_name}/collaborators/{user}/permission"
            self.fake.inject("GET", path, status=status, headers={"retry-after": "0"}, times=None)

    # ------------------------------------------------------------ the end of a test
    def secrets(self) -> list[str]:
        token = self.fake.token
        return [token, base64.b64encode(f"{token}:x-oauth-basic".encode()).decode()]


class GiteaApi:
    """The calls a job makes on Gitea and Forgejo, as :meth:`Forge.calls` lists them."""

    def __init__(self, forge: Gitea) -> None:
        self.forge = forge
        self.repo = f"/api/v1/repos/{forge.full_name}"

    def command(self, comment: Any) -> list[str]:
        """What every command job asks first: who the bot is and the pull request, then the
        eyes reaction on ``comment``."""
        return [
            "GET /api/v1/user 200",
            f"GET {self.repo}/pulls/{self.forge.number} 200",
            f"POST {self.repo}/issues/comments/{comment['id']}/reactions 201",
        ]

    def permission(self, user: str, status: int = 200, attempts: int = 1) -> list[str]:
        return [f"GET {self.repo}/collaborators/{user}/permission {status}"] * attempts

    def reply(self) -> list[str]:
        return [f"POST {self.repo}/issues/{self.forge.number}/comments 201"]

    def own_comment(self) -> list[str]:
        """A comment of the bot's: who the bot is, only."""
        return ["GET /api/v1/user 200"]

    def check(
        self, head: str, *, summary: str = "edited", new_worker: bool = False, rebuilt: bool = False
    ) -> list[str]:
        """A check of ``head``: pending, the summary comment found and ``summary`` (posted,
        edited, unchanged), the verdict. ``new_worker``: the bot's login is asked first (once
        per worker); ``rebuilt``: the approvals are read back from the comments first."""
        comments = f"GET {self.repo}/issues/{self.forge.number}/comments 200"
        wrote = {"posted": [f"POST {self.repo}/issues/{self.forge.number}/comments 201"]}
        if summary == "edited":
            (found,) = [
                c
                for c in self.forge.fake.comments(self.forge.full_name, self.forge.number)
                if "ichor:summary" in c["body"]
            ]
            wrote["edited"] = [f"PATCH {self.repo}/issues/comments/{found['id']} 200"]
        return [
            f"POST {self.repo}/statuses/{head} 201",
            *(["GET /api/v1/user 200"] if new_worker else []),
            *([comments] if rebuilt else []),
            comments,
            *wrote.get(summary, []),
            f"POST {self.repo}/statuses/{head} 201",
        ]

    def lookup(self, branch: str, status: int = 200, *, found: bool = True) -> list[str]:
        status = status if found else 404  # none open: Gitea answers 404
        return [f"GET {self.repo}/pulls/main/{quote(branch, safe='')} {status}"]

    def open_pull(self) -> list[str]:
        return [f"POST {self.repo}/pulls 201"]

    def found(self, pull: Pull) -> list[str]:
        return []

    def lookup_error(self, branch: str, status: int) -> str:
        path = f"/repos/{self.forge.full_name}/pulls/main/{quote(branch, safe='')}"
        return f"Gitea GET {path}: {status} {HTTPStatus(status).phrase}: injected fault"
