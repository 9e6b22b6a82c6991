"""The GitLab driver: a project on the fake GitLab (the commit status state machine, diff
positions, notes, award emoji and member look-ups as GitLab's documentation describes them).
The verdict is the ``ichor/acceptance`` commit status; line comments are discussions; the
hooks are ``Merge Request Hook``, ``Note Hook`` and ``Push Hook``."""

from __future__ import annotations

import base64
import copy
import json
from http import HTTPStatus
from pathlib import Path
from typing import Any

from tests.e2e.drivers.forge import AUTHOR, MAINTAINER, READER, Comment, Forge, LineComment, Pull
from tests.e2e.harness import ROOT, Bot
from tests.fakeforge.gitlab import FakeGitLab

MR_FIXTURE = ROOT / "fixtures/webhooks/gitlab/merge_request__update-woodpecker.json"
NOTE_FIXTURE = ROOT / "fixtures/webhooks/gitlab/note__merge_request-go-gitlab.json"
PUSH_FIXTURE = ROOT / "fixtures/webhooks/gitlab/push__go-gitlab.json"
FORK_PROJECT = 9999
PROJECT_ID = 4242


class GitLab(Forge):
    kind = route = "gitlab"
    PASSED, FAILED, WAITING = "success", "failed", "failed"
    APPROVE = "/ichor approve"  # GitLab runs its own /approve quick action first

    def __init__(self, fake: FakeGitLab, bot: Bot, tmp_path: Path, number: int = 7) -> None:
        super().__init__(bot, tmp_path, number)
        self.fake = fake
        self.bot_name = fake.bot_username
        self.identity = f"{fake.bot_username} <{fake.bot_username}@users.noreply.127.0.0.1>"
        self.project_id = PROJECT_ID
        fake.add_project(self.full_name, self.project_id)
        self.bare = fake.make_bare_repo(self.full_name)
        self.ids = {
            AUTHOR: fake.add_member(self.full_name, AUTHOR, 30),  # Developer: write
            MAINTAINER: fake.add_member(self.full_name, MAINTAINER, 40),
            READER: fake.add_member(self.full_name, READER, 20),  # Reporter: read
        }
        self.planted = 0
        self.api = GitLabApi(self)

    # ------------------------------------------------------------ webhooks
    def _project(self) -> dict[str, Any]:
        name = self.full_name.split("/")[1]
        web = f"{self.fake.url}/{self.full_name}"
        clone = self.fake.clone_url(self.full_name)
        return {
            "id": self.project_id,
            "name": name,
            "path_with_namespace": self.full_name,
            "web_url": web,
            "homepage": web,
            "git_http_url": clone,
            "http_url": clone,
            "url": clone,
            "default_branch": "main",  # the recorded deliveries' projects say "master"
        }

    def _pull_request(self, number: int, head: str, base: str, fork: bool) -> dict[str, Any]:
        self.local.set_ref(f"refs/merge-requests/{number}/head", head)
        self.publish()
        before = self.heads.get(number)
        source = FORK_PROJECT if fork else self.project_id
        if before is None:
            self.fake.add_merge_request(
                self.full_name, number, head, base, source_project_id=source
            )
        else:
            self.fake.push_merge_request(self.full_name, number, head)
        payload: dict[str, Any] = copy.deepcopy(json.loads(MR_FIXTURE.read_text()))
        project = payload["project"]
        project.update({k: v for k, v in self._project().items() if k != "url"})
        project.pop("homepage", None)
        attributes = payload["object_attributes"]
        attributes.update(
            iid=number,
            action="update" if before else "open",
            target_branch="main",
            source_branch="feature",
            target_project_id=self.project_id,
            source_project_id=source,
        )
        attributes["last_commit"]["id"] = head
        if before:
            attributes["oldrev"] = before
        else:
            attributes.pop("oldrev", None)
        for side, pid in (("target", self.project_id), ("source", source)):
            path = self.full_name if pid == self.project_id else "forker/gitops"
            attributes[side] = {**project, "id": pid, "path_with_namespace": path}
        web = project["web_url"]
        payload["repository"].update(
            name=project["name"], url=project["git_http_url"], homepage=web
        )
        return payload

    def deliver(self, payload: dict[str, Any]) -> None:
        assert self.bot.post("merge_request", payload, forge="gitlab") == 202

    def _add_comment(self, number: int, body: str, user: str) -> Any:
        note = self.fake.add_note(self.full_name, number, body, author=user)
        note["number"] = number
        return note

    def edit_comment(self, comment: Any, body: str) -> Any:
        note = self.fake.edit_note(self.full_name, comment["number"], comment["id"], body)
        note["number"] = comment["number"]
        return note

    def deliver_comment(self, comment: Any, *, action: str = "created") -> int:
        """The ``Note Hook`` GitLab sends for the note (``action``: created or edited)."""
        iid, author = comment["number"], comment["author"]["username"]
        payload: dict[str, Any] = copy.deepcopy(json.loads(NOTE_FIXTURE.read_text()))
        project = payload["project"]
        project.update(self._project())
        web = project["web_url"]
        payload["project_id"] = self.project_id
        payload["repository"].update(name=project["name"], url=project["url"], homepage=web)
        payload["user"].update(id=self.fake.add_user(author), username=author, name=author)
        payload["object_attributes"].update(
            id=comment["id"],
            note=comment["body"],
            action="create" if action == "created" else "update",
            author_id=comment["author"]["id"],
            created_at=comment["created_at"],
            project_id=self.project_id,
            url=f"{web}/-/merge_requests/{iid}#note_{comment['id']}",
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
        return self.bot.post("Note Hook", payload, forge="gitlab")

    def deliver_push(self, before: str, after: str, ref: str = "refs/heads/main") -> None:
        payload: dict[str, Any] = copy.deepcopy(json.loads(PUSH_FIXTURE.read_text()))
        project = self._project()
        payload["project"].update({k: v for k, v in project.items() if k != "url"})
        payload["repository"].update(
            name=project["name"], git_http_url=project["git_http_url"], homepage=project["web_url"]
        )
        payload.update(
            project_id=self.project_id, ref=ref, before=before, after=after, checkout_sha=after
        )
        assert self.bot.post("push", payload, forge="gitlab") == 202

    def deliver_repository_created(self) -> None:
        """A system hook's ``project_create``, in the shape GitLab documents it."""
        payload = {
            "created_at": "2026-12-05T10:00:00Z",
            "updated_at": "2026-12-05T10:00:00Z",
            "event_name": "project_create",
            "name": self.full_name.split("/")[1],
            "owner_email": "",
            "owner_name": "Maria",
            "owners": [{"name": "Maria", "email": ""}],
            "path": self.full_name.split("/")[1],
            "path_with_namespace": self.full_name,
            "project_id": self.project_id,
            "project_namespace_id": 2,
            "project_visibility": "private",
        }
        assert self.bot.post("System Hook", payload, forge="gitlab") == 202

    # ------------------------------------------------------------ what the forge holds
    def statuses(self, sha: str) -> list[dict[str, Any]]:
        """The ``ichor/acceptance`` statuses of ``sha``, oldest first."""
        found = self.fake.statuses(self.full_name, sha)
        return [s for s in found if s["name"] == "ichor/acceptance"]

    def verdict(self, sha: str | None = None) -> tuple[str, str]:
        mine = self.statuses(sha or self.head)
        assert mine, f"no status on {sha or self.head}"
        return mine[-1]["status"], mine[-1]["description"]

    def states(self, sha: str) -> list[str]:
        return [state for status in self.statuses(sha) for state in status["history"]]

    def checked(self, *finals: str) -> list[str]:
        # Each check a status of its own: created, pending, running, then its verdict.
        return [state for final in finals for state in ("created", "pending", "running", final)]

    def check_names(self, sha: str) -> set[str]:
        return {s["name"] for s in self.fake.statuses(self.full_name, sha)}

    def verdict_url(self, sha: str) -> str | None:
        url: str | None = self.statuses(sha)[-1]["target_url"]
        return url

    def flaky(self) -> None:
        self.fake.inject(method="POST", path=r"/api/v4/projects/\d+/statuses/.*", status=502)
        self.fake.inject_rate_limit(
            method="POST", path=r"/api/v4/projects/\d+/merge_requests/\d+/notes"
        )

    def reactions(self, comment: Any) -> list[str]:
        awards = self.fake.awards(self.full_name, comment["number"], comment["id"])
        return [a["name"] for a in awards if a["user"]["username"] == self.bot_name]

    def line_comments(self, number: int | None = None) -> list[LineComment]:
        discussions = self.fake.discussions(self.full_name, number or self.number)
        firsts = [d["notes"][0] for d in discussions]
        return [
            LineComment(n["position"]["new_path"], n["body"], n["resolved"])
            for n in firsts
            if "ichor:finding" in n["body"]
        ]

    def comments(self, number: int | None = None) -> list[Comment]:
        number = number or self.number
        web = f"{self.fake.url}/{self.full_name}/-/merge_requests/{number}"
        return [
            Comment(str(n["id"]), n["author"]["username"], n["body"], f"{web}#note_{n['id']}")
            for n in self.fake.notes(self.full_name, number)
            if n["type"] != "DiffNote"  # a line comment's: :meth:`line_comments`
        ]

    def pulls(self) -> list[Pull]:
        return [_pull(m) for m in self.fake.merge_requests(self.full_name)]

    def plant(self, branch: str, body: str, *, sha: str | None = None, state: str = "open") -> Pull:
        sha = sha or self.rev("main")
        self.move(branch, sha)
        self.planted += 1  # each planted merge request its own iid
        mr = self.fake.add_merge_request(
            self.full_name,
            89 + self.planted,
            sha,
            self.rev("main"),
            branch,
            author=self.bot_name,
            description=body,
            state="opened" if state == "open" else state,
        )
        return _pull(mr)

    def lookups(self) -> list[tuple[str, str]]:
        return [
            (c.query["source_branch"], c.query["target_branch"])
            for c in self.fake.calls
            if c.route == "list_mrs"
            and set(c.query) == {"state", "source_branch", "target_branch"}
            and c.query["state"] == "opened"
        ]

    # ------------------------------------------------------------ faults
    def fail_permission_lookups(self, status: int, user: str) -> None:
        self.fake.fail_member_lookups(status)  # every attempt, of anyone

    def fail_pull_lookups(self, status: int) -> None:
        path = rf"/api/v4/projects/{self.project_id}/merge_requests"
        self.fake.inject("GET", path, status=status, times=None)

    # ------------------------------------------------------------ the end of a test
    def secrets(self) -> list[str]:
        token = self.fake.token
        return [token, base64.b64encode(f"oauth2:{token}".encode()).decode()]


def _pull(m: dict[str, Any]) -> Pull:
    return Pull(
        m["iid"],
        m["source_branch"],
        m["target_branch"],
        m["sha"],
        m["title"],
        m["description"] or "",
        m["web_url"],
        m["author"]["username"],
        "open" if m["state"] == "opened" else "closed",
    )


class GitLabApi:
    """The calls a job makes on GitLab, as :meth:`Forge.calls` lists them."""

    def __init__(self, forge: GitLab) -> None:
        self.forge = forge
        self.project = f"/api/v4/projects/{forge.project_id}"
        self.mr = f"{self.project}/merge_requests/{forge.number}"

    def command(self, note: Any) -> list[str]:
        """What every command job asks first: who the bot is and the merge request, then the
        eyes award on ``note``."""
        return [
            "GET /api/v4/user 200",
            f"GET {self.mr} 200",
            f"POST {self.mr}/notes/{note['id']}/award_emoji 201",
        ]

    def permission(self, user: str, status: int = 200, attempts: int = 1) -> list[str]:
        member = f"GET {self.project}/members/all/{self.forge.ids[user]} {status}"
        return ["GET /api/v4/users 200", member] * attempts  # the user's id, then the member

    def reply(self) -> list[str]:
        return [f"POST {self.mr}/notes 201"]

    def own_comment(self) -> list[str]:
        """A note of the bot's, which its hook already names: nothing."""
        return []

    def check(
        self, head: str, *, summary: str = "edited", new_worker: bool = False, rebuilt: bool = False
    ) -> list[str]:
        """A check of ``head``: running, the summary note found and ``summary`` (posted,
        edited, unchanged), the verdict. ``new_worker``: the bot's user is asked first (once
        per worker); ``rebuilt``: the approvals are read back from the notes before that."""
        notes = f"GET {self.mr}/notes 200"
        wrote = {"posted": [f"POST {self.mr}/notes 201"]}
        if summary == "edited":
            (note,) = [
                n
                for n in self.forge.fake.notes(self.forge.full_name, self.forge.number)
                if "ichor:summary" in n["body"]
            ]
            wrote["edited"] = [f"PUT {self.mr}/notes/{note['id']} 200"]
        return [
            f"POST {self.project}/statuses/{head} 201",
            *([notes] if rebuilt else []),
            *(["GET /api/v4/user 200"] if new_worker else []),
            notes,
            *wrote.get(summary, []),
            f"POST {self.project}/statuses/{head} 201",
        ]

    def lookup(self, branch: str, status: int = 200, *, found: bool = True) -> list[str]:
        return [f"GET {self.project}/merge_requests {status}"]

    def open_pull(self) -> list[str]:
        return [f"POST {self.project}/merge_requests 201"]

    def found(self, pull: Pull) -> list[str]:
        """A listed merge request has no diff refs: the merge request itself."""
        return [f"GET {self.project}/merge_requests/{pull.number} 200"]

    def lookup_error(self, branch: str, status: int) -> str:
        shown = f"{status} {HTTPStatus(status).phrase}"
        return f"GitLab GET {self.project}/merge_requests: {shown}: {shown}"
