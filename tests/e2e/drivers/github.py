"""The GitHub driver: a repository of the app's installation 42 on the fake GitHub (every
request validated against GitHub's OpenAPI description). The verdict is a check run, buttons
and all; line comments are review comments; the installation token is asked for once per
worker process."""

from __future__ import annotations

import base64
import copy
import json
import subprocess
from http import HTTPStatus
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

from tests.e2e.drivers.forge import (
    AUTHOR,
    MAINTAINER,
    READER,
    GitHubShaped,
    LineComment,
    Pull,
)
from tests.e2e.harness import BIN, ROOT, Bot, pull_request_payload
from tests.fakeforge import FakeGitHub
from tests.support.merge_group import merge_group_payload, queue_ref

COMMENT_FIXTURE = ROOT / "fixtures/webhooks/github/issue_comment__created-on-pr-go-scm.json"
BUTTON_FIXTURE = ROOT / "fixtures/webhooks/github/check_run__requested_action.json"
PUSH_FIXTURE = ROOT / "fixtures/webhooks/github/push__branch.json"
TOKEN_CALL = "POST /app/installations/42/access_tokens 201"
FORK = "forker/gitops"


class GitHub(GitHubShaped):
    kind = route = "github"
    PASSED, FAILED, WAITING = "success", "failure", "action_required"
    BUTTONS: ClassVar[list[str]] = ["approve", "recheck"]

    def __init__(self, fake: FakeGitHub, bot: Bot, tmp_path: Path, number: int = 7) -> None:
        super().__init__(bot, tmp_path, number)
        self.fake = fake
        self.bot_name = fake.bot_login
        email = fake.bot_login.replace("[", "").replace("]", "")
        self.identity = f"{fake.bot_login} <{email}@users.noreply.127.0.0.1>"
        fake.add_repo(self.full_name, installation_id=42)
        for user, role in ((AUTHOR, "write"), (MAINTAINER, "write"), (READER, "read")):
            fake.set_permission(self.full_name, user, role)
        self.bare = fake.make_bare_repo(self.full_name)
        self.api = GitHubApi(self)

    # ------------------------------------------------------------ webhooks
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
                user=AUTHOR,
                head_repo=FORK if fork else None,
            )
        payload = pull_request_payload(
            full_name=self.full_name,
            clone_url=self.fake.clone_url(self.full_name),
            number=number,
            head_sha=head,
            base_sha=base,
            fork=FORK if fork else None,
        )
        payload["pull_request"]["user"]["login"] = AUTHOR
        return payload

    def deliver(self, payload: dict[str, Any]) -> None:
        assert self.bot.post("pull_request", payload) == 202

    def _add_comment(self, number: int, body: str, user: str) -> Any:
        comment = self.fake.add_comment(self.full_name, number, body, user=user)
        return {**comment, "number": number}

    def edit_comment(self, comment: Any, body: str) -> Any:
        return {**self.fake.edit_comment(comment["id"], body), "number": comment["number"]}

    def deliver_comment(self, comment: Any, *, action: str = "created") -> int:
        payload: dict[str, Any] = copy.deepcopy(json.loads(COMMENT_FIXTURE.read_text()))
        payload["action"] = action
        self._point(payload)
        payload["repository"]["default_branch"] = "main"
        payload["issue"]["number"] = comment["number"]
        user = comment["user"]["login"]
        payload["comment"].update(
            id=comment["id"], body=comment["body"], created_at=comment["created_at"]
        )
        payload["comment"]["user"].update(login=user, type="Bot" if "[bot]" in user else "User")
        payload["sender"]["login"] = user
        payload["installation"] = {"id": 42}
        return self.bot.post("issue_comment", payload)

    def press(self, identifier: str, *, user: str = MAINTAINER, run: Any = None) -> None:
        """``user`` presses a button of check run ``run`` (the newest when None)."""
        run = run or self.check_runs()[-1]
        payload: dict[str, Any] = copy.deepcopy(json.loads(BUTTON_FIXTURE.read_text()))
        self._point(payload)
        payload["check_run"].update(id=run["id"], head_sha=run["head_sha"])
        payload["check_run"]["pull_requests"][0]["number"] = self.number
        payload["requested_action"] = {"identifier": identifier}
        payload["sender"].update(login=user, type="User")
        payload["installation"] = {"id": 42}
        assert self.bot.post("check_run", payload) == 202

    def deliver_push(self, before: str, after: str, ref: str = "refs/heads/main") -> None:
        payload: dict[str, Any] = copy.deepcopy(json.loads(PUSH_FIXTURE.read_text()))
        self._point(payload)
        repo, owner = payload["repository"], self.full_name.split("/")[0]
        repo.update(default_branch="main", master_branch="main")
        repo["owner"].update(login=owner, name=owner)
        payload.update(ref=ref, before=before, after=after)
        payload.update(created=False, deleted=False, installation={"id": 42})
        assert self.bot.post("push", payload) == 202

    # ------------------------------------------------------------ merge queues
    def queue(self, pulls: tuple[int, ...], *, base: str | None = None) -> tuple[str, str]:
        """GitHub's merge queue builds a merge group of ``pulls`` (their heads merged one by
        one, as its merge method does) on ``base`` (main's tip when None) and puts it on the
        group's ``gh-readonly-queue/main/pr-<n>-<base>`` branch on the forge: (head, ref)."""
        base = base or self.rev("refs/heads/main")
        self.local.checkout("queue", create_from=base)
        for number in pulls:
            self.local.git("merge", "-q", "--no-ff", "-m", f"Merge #{number}", self.heads[number])
        head = self.local.git("rev-parse", "HEAD")
        ref = queue_ref("main", base, pulls)
        self.local.set_ref(ref, head)
        self.publish()
        return head, ref

    def deliver_merge_group(
        self, head: str, ref: str, base: str, *, action: str = "checks_requested"
    ) -> int:
        """The ``merge_group`` webhook of the group at ``head`` (its branch ``ref``); the
        answer's status (202 queued, 200 when its job was queued already)."""
        payload = merge_group_payload(head_sha=head, base_sha=base, head_ref=ref, action=action)
        self._point(payload)
        payload["repository"].update(default_branch="main", master_branch="main")
        return self.bot.post("merge_group", payload)

    def deliver_queue_push(self, head: str, ref: str) -> int:
        """The push that created the group's branch ``ref`` at ``head``; the answer's status."""
        payload: dict[str, Any] = copy.deepcopy(json.loads(PUSH_FIXTURE.read_text()))
        self._point(payload)
        payload["repository"].update(default_branch="main", master_branch="main")
        payload.update(ref=ref, before="0" * 40, after=head, created=True, deleted=False)
        payload["installation"] = {"id": 42}
        return self.bot.post("push", payload)

    def _point(self, payload: dict[str, Any]) -> None:
        """Every URL of the repository names it: one naming another is refused at ingress."""
        owner, name = self.full_name.split("/")
        clone = self.fake.clone_url(self.full_name)
        repo = payload["repository"]
        repo.update(full_name=self.full_name, name=name, clone_url=clone)
        repo.update(html_url=clone.removesuffix(".git"))
        repo["owner"]["login"] = owner

    def onboard(self) -> subprocess.CompletedProcess[str]:
        """``ichor-bot onboard`` in its own process, with the worker's settings."""
        env = self.bot._env({**self.fake.env(), "ICHOR_DATA_DIR": str(self.data_dir)})
        argv = [str(BIN / "ichor-bot"), "onboard", "github", self.full_name, "--installation"]
        return subprocess.run(
            [*argv, "42"], env=env, capture_output=True, text=True, timeout=120, check=False
        )

    # ------------------------------------------------------------ what the forge holds
    def check_runs(self) -> list[dict[str, Any]]:
        runs: list[dict[str, Any]] = self.fake.check_runs(self.full_name)
        return runs

    def only_check_run(self) -> dict[str, Any]:
        runs = self.check_runs()
        assert len(runs) == 1, runs
        return runs[0]

    def verdict(self, sha: str | None = None) -> tuple[str, str]:
        runs = [r for r in self.check_runs() if r["head_sha"] == (sha or self.head)]
        assert runs, f"no check run on {sha or self.head}"
        return runs[-1]["conclusion"], runs[-1]["output"]["title"]

    def states(self, sha: str) -> list[str]:
        return [r["conclusion"] or r["status"] for r in self.check_runs() if r["head_sha"] == sha]

    def checked(self, *finals: str) -> list[str]:
        return list(finals)

    def check_names(self, sha: str) -> set[str]:
        return {r["name"] for r in self.check_runs() if r["head_sha"] == sha}

    def verdict_url(self, sha: str) -> str | None:
        return None  # the check run is its own summary

    def flaky(self) -> None:
        self.fake.inject(method="POST", path=r"/repos/.*/check-runs", status=502, times=1)
        self.fake.inject(
            method="PATCH",
            path=r"/repos/.*/check-runs/\d+",
            status=429,
            headers={"retry-after": "1"},
            times=1,
        )

    def summary(self) -> str:
        """The summary comment when the bot writes one (``ICHOR_GITHUB_SUMMARY_COMMENT``),
        else the newest check run's title and summary, as GitHub shows them."""
        if self.summary_comments():
            return super().summary()
        output = self.check_runs()[-1]["output"]
        return f"{output['title']}\n\n{output['summary']}"

    def buttons(self) -> list[str]:
        return [a["identifier"] for a in self.check_runs()[-1].get("actions") or []]

    def annotations(self) -> list[dict[str, Any]]:
        """The newest check run's annotations."""
        found: list[dict[str, Any]] = self.check_runs()[-1]["output"].get("annotations", [])
        return found

    def reactions(self, comment: Any) -> list[str]:
        return [r["content"] for r in self.fake.reactions() if r["comment_id"] == comment["id"]]

    def line_comments(self, number: int | None = None) -> list[LineComment]:
        return [
            LineComment(c["path"], c["body"], "Fixed in" in c["body"])
            for c in self.fake.review_comments(self.full_name, number or self.number)
        ]

    def plant(self, branch: str, body: str, *, sha: str | None = None, state: str = "open") -> Pull:
        sha = sha or self.rev("main")
        self.move(branch, sha)
        pull = self.fake.add_pull(
            self.full_name, head_sha=sha, head_ref=branch, body=body, user=self.bot_name
        )
        if state != "open":
            self.fake.update_pull(self.full_name, pull["number"], state=state)
        (planted,) = [p for p in self.pulls() if p.number == pull["number"]]
        return planted

    def lookups(self) -> list[tuple[str, str]]:
        return [
            (c.query["head"].split(":", 1)[1], c.query["base"])
            for c in self.fake.calls
            if (c.method, c.path) == ("GET", f"/repos/{self.full_name}/pulls")
            and set(c.query) == {"state", "head", "base"}
            and c.query["state"] == "open"
            and c.query["head"].startswith(self.full_name.split("/")[0] + ":")
        ]

    # ------------------------------------------------------------ faults
    def fail_permission_lookups(self, status: int, user: str) -> None:
        self.fake.inject_permission_failure(status, user=user, times=None)

    def fail_pull_lookups(self, status: int) -> None:
        self.fake.inject_pull_lookup_failure(status, full_name=self.full_name, times=None)

    # ------------------------------------------------------------ the end of a test
    def secrets(self) -> list[str]:
        tokens: list[str] = list(self.fake.tokens)
        basic = [base64.b64encode(f"x-access-token:{t}".encode()).decode() for t in tokens]
        return [*tokens, *basic]

    def leaks(self, text: str) -> bool:
        return "ghs_" in text or super().leaks(text)  # an installation token's prefix

    def assert_clean(self) -> None:
        assert self.fake.validation_errors == []
        assert self.fake.auth_failures == []
        assert self.fake.response_errors == []
        assert all(r.authorized for r in self.fake.git.requests)  # the token on every one


class GitHubApi:
    """The calls a job makes on GitHub, as :meth:`Forge.calls` lists them."""

    def __init__(self, forge: GitHub) -> None:
        self.forge = forge
        self.repo = f"/repos/{forge.full_name}"

    def command(self, comment: Any) -> list[str]:
        """What every command job asks first: the app (its bot's login), a token, the pull
        request, then the eyes reaction on ``comment``."""
        return [
            "GET /app 200",
            TOKEN_CALL,
            f"GET {self.repo}/pulls/{self.forge.number} 200",
            f"POST {self.repo}/issues/comments/{comment['id']}/reactions 201",
        ]

    def permission(self, user: str, status: int = 200, attempts: int = 1) -> list[str]:
        return [f"GET {self.repo}/collaborators/{user}/permission {status}"] * attempts

    def reply(self) -> list[str]:
        return [f"POST {self.repo}/issues/{self.forge.number}/comments 201"]

    def own_comment(self) -> list[str]:
        """A comment of the app's, which its webhook names as a bot's: nothing."""
        return []

    def check(
        self, head: str, *, summary: str = "edited", new_worker: bool = False, rebuilt: bool = False
    ) -> list[str]:
        """A check of ``head``: a check run created in progress, then completed (the summary is
        the check run's own). ``new_worker``: a token is asked for first (once per worker);
        ``rebuilt``: the approvals are read back from the bot's comments (the app asked for
        its bot's login) before the check run is completed."""
        run = self.forge.check_runs()[-1]["id"]  # the newest: the one this check made
        comments = f"GET {self.repo}/issues/{self.forge.number}/comments 200"
        return [
            *([TOKEN_CALL] if new_worker else []),
            f"POST {self.repo}/check-runs 201",
            *([comments, "GET /app 200"] if rebuilt else []),
            f"PATCH {self.repo}/check-runs/{run} 200",
        ]

    def lookup(self, branch: str, status: int = 200, *, found: bool = True) -> list[str]:
        return [f"GET {self.repo}/pulls {status}"]

    def open_pull(self) -> list[str]:
        return [f"POST {self.repo}/pulls 201"]

    def found(self, pull: Pull) -> list[str]:
        return []

    def lookup_error(self, branch: str, status: int) -> str:
        owner = self.forge.full_name.split("/")[0]
        query = f"state=open&head={owner}%3A{quote(branch, safe='')}&base=main"
        return f"GitHub GET {self.repo}/pulls?{query}: {status} {HTTPStatus(status).phrase}"
