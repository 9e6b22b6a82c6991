"""What an end-to-end test does on a forge, whichever it is.

:class:`Forge` is one repository on a fake forge with its pull requests (merge requests on
GitLab), a local clone that grows commit by commit, worker runs of the real ``ichor-bot
worker``, the forge's git and the bot's records in Redis. What is the same on every forge is
done here; what each forge does its own way (its webhooks, how a pull request is opened and a
comment written, where the verdict, the replies and the line comments are read, the API calls
a job makes) is each driver's: :mod:`.github`, :mod:`.gitlab`, :mod:`.gitea`.

People: ``alice`` opens the pull requests (write), ``maria`` maintains the repository (write;
a Maintainer on GitLab), ``rita`` may only read.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, Protocol

from bot.approvals.approval import Approval
from bot.approvals.marker import approvals_from_comments
from bot.forges.base import ForgeComment
from bot.state.base import pull_key
from bot.state.redis_state import RedisApprovals, RedisAudit
from tests.e2e.harness import Bot, WorkerRun
from tests.support.gitops import base_files
from tests.support.gitrepo import WorkRepo

AUTHOR, MAINTAINER, READER = "alice", "maria", "rita"
Files = Mapping[str, str | None]


@dataclass(frozen=True)
class Pull:
    """A pull request (or merge request) as a test reads it, on any forge."""

    number: int
    head_ref: str
    base_ref: str
    sha: str
    title: str
    body: str
    url: str
    author: str
    state: str  # open, closed (merged or not)

    @classmethod
    def of(cls, p: dict[str, Any]) -> Pull:
        """From a pull request as GitHub's and Gitea's APIs write it (the same shape)."""
        return cls(
            p["number"],
            p["head"]["ref"],
            p["base"]["ref"],
            p["head"]["sha"],
            p["title"],
            p["body"] or "",
            p["html_url"],
            p["user"]["login"],
            p["state"],
        )


class Comment(NamedTuple):
    """A comment on a pull request (a note on GitLab), as a test reads it on any forge."""

    id: str
    author: str
    body: str
    url: str


@dataclass(frozen=True)
class LineComment:
    """A line comment of the bot on a finding: its file and whether it was resolved (or, on
    GitHub, marked fixed)."""

    path: str
    body: str
    resolved: bool


class Api(Protocol):
    """The API calls a job makes on a forge, as :meth:`Forge.calls` lists them: each driver's
    ``api`` spells them its forge's way, so one test asserts the exact calls on every forge."""

    def command(self, comment: Any) -> list[str]:
        """What every command job does first, ending with its reaction to ``comment``."""
        ...

    def permission(self, user: str, status: int = 200, attempts: int = 1) -> list[str]:
        """The look-up of ``user``'s permission, answered ``status``, ``attempts`` times."""
        ...

    def reply(self) -> list[str]:
        """The bot's reply on the pull request."""
        ...

    def own_comment(self) -> list[str]:
        """What a job does for a comment of the bot's own."""
        ...

    def check(
        self, head: str, *, summary: str = "edited", new_worker: bool = False, rebuilt: bool = False
    ) -> list[str]:
        """A check of ``head`` that finds nothing to comment on a line."""
        ...

    def lookup(self, branch: str, status: int = 200, *, found: bool = True) -> list[str]:
        """One look-up of the open pull request from ``branch`` into main, answered ``status``
        (or, when not ``found``, as the forge says there is none)."""
        ...

    def open_pull(self) -> list[str]:
        """Opening a pull request."""
        ...

    def found(self, pull: Pull) -> list[str]:
        """What a change job asks of the open pull request its look-up found."""
        ...

    def lookup_error(self, branch: str, status: int) -> str:
        """How the bot names the error of a look-up of ``branch``'s pull request that was
        answered ``status``."""
        ...


class Forge:
    """One repository on one fake forge; ``number`` is its pull request unless one is named."""

    kind: str  # github, gitlab, gitea, forgejo
    route: str  # the webhook route and the forge's name in Redis keys: github, gitlab, gitea
    PASSED: ClassVar[str]  # the forge's state of a check that passed
    FAILED: ClassVar[str]  # ... that refused
    WAITING: ClassVar[str]  # ... whose strict objects wait for /approve
    BUTTONS: ClassVar[list[str]] = []  # the check's buttons (GitHub's requested actions)
    APPROVE: ClassVar[str] = "/approve"  # the /approve command (GitLab runs its own)
    bot_name: str  # the bot's user name on the forge
    identity: str  # the author and committer of the bot's commits: "name <email>"
    fake: Any
    api: Api

    def __init__(self, bot: Bot, tmp_path: Path, number: int = 7) -> None:
        self.bot = bot
        self.number = number
        self.full_name = f"e2e-{uuid.uuid4().hex[:8]}/gitops"
        bot.repositories.add(self.full_name)
        self.local = WorkRepo(tmp_path / "work")
        self.data_dir = tmp_path / "worker-data"
        self.runs: list[WorkerRun] = []
        self.posted: list[str] = []  # every API request body the bot sent (searched at the end)
        self.worker_env: dict[str, str] = {}  # more settings of the workers
        self.tolerated: str | None = None  # what each validation error the test expects names
        self.base_sha = ""
        self.head = ""  # pull request ``number``'s head
        self.heads: dict[int, str] = {}
        self.bare: Path = Path()  # set by each driver once the repository exists

    # ------------------------------------------------------------ commits and pull requests
    def base(self, extra: Files | None = None, *, config: str | None = None) -> str:
        """The base commit on main (two accepted targets, ``config`` as ``.ichor.yaml`` when
        given, and ``extra``), published; the local clone then works on ``feature``."""
        files: dict[str, str | None] = {**base_files(), **(extra or {})}
        if config is not None:
            files[".ichor.yaml"] = config
        self.base_sha = self.local.commit(files, "base")
        self.publish()
        self.local.checkout("feature", create_from=self.base_sha)
        return self.base_sha

    def commit(self, files: Files) -> str:
        return self.local.commit(files)

    def publish(self) -> None:
        """Every ref of the local clone onto the forge's git."""
        self.local.publish(self.bare)

    def pull_request(
        self,
        head: str,
        *,
        number: int | None = None,
        base: str | None = None,
        fork: bool = False,
        deliver: bool = True,
    ) -> dict[str, Any]:
        """``head`` becomes the pull request's head on the forge (opened the first time, from
        a fork when ``fork``), and the webhook that says so is delivered unless ``deliver`` is
        off; the webhook's payload."""
        number = number or self.number
        payload = self._pull_request(number, head, base or self.base_sha, fork)
        self.heads[number] = head
        if number == self.number:
            self.head = head
        if deliver:
            self.deliver(payload)
        return payload

    def push(self, files: Files, *, check: bool = True, number: int | None = None) -> str:
        """A new head of ``files`` on ``feature``, delivered and (unless ``check`` is off) worked
        on; the head."""
        head = self.commit(files)
        self.pull_request(head, number=number)
        if check:
            self.work()
        return head

    def open(self, files: Files, config: str, *, check: bool = True) -> str:
        """The base with ``config``, and the pull request of ``files``; its head."""
        self.base(config=config)
        return self.push(files, check=check)

    # ------------------------------------------------------------ comments
    def comment(
        self,
        body: str,
        *,
        user: str = MAINTAINER,
        number: int | None = None,
        deliver: bool = True,
    ) -> Any:
        """``user`` comments ``body`` on the pull request, and (unless ``deliver`` is off) the
        webhook says so: queued, and no worker runs yet."""
        comment = self._add_comment(number or self.number, body, user)
        if deliver:
            assert self.deliver_comment(comment) == 202
        return comment

    def command(self, body: str, *, user: str = MAINTAINER, number: int | None = None) -> Any:
        """``user`` comments ``body``; one worker run, and the forge's calls are of it alone."""
        self.reset_calls()
        comment = self.comment(body, user=user, number=number)
        self.work()
        return comment

    def ask(self, body: str, *, user: str = MAINTAINER, number: int | None = None) -> str:
        """``user`` comments ``body``: the bot's one new reply."""
        before = len(self.replies(number))
        self.command(body, user=user, number=number)
        replies = self.replies(number)
        assert len(replies) == before + 1, (replies, self.runs[-1].log[-3000:])
        return replies[-1]

    # ------------------------------------------------------------ workers
    def run_worker(self, data_dir: Path | None = None) -> WorkerRun:
        """One ``worker --burst`` (with a mirror of its own under ``data_dir`` when given)."""
        env = {**self.fake.env(), **self.worker_env}
        run = self.bot.run_worker(env, data_dir or self.data_dir)
        self.runs.append(run)
        for call in self.fake.calls:  # before a later reset forgets them
            body = getattr(call, "body", b"") or b""
            self.posted.append(json.dumps(call.json) + body.decode("utf-8", "replace"))
        return run

    def work(self) -> WorkerRun:
        """One worker run that ends well and prints no token."""
        run = self.run_worker()
        assert run.code == 0, run.log
        assert not self.leaks(run.log)
        return run

    def calls(self) -> list[str]:
        """The forge's API calls since the last reset: ``METHOD /path status``."""
        calls: list[str] = self.fake.calls_summary()
        return calls

    def reset_calls(self) -> None:
        self.fake.reset_calls()

    # ------------------------------------------------------------ the forge's git
    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "--git-dir", str(self.bare), *args], check=True, capture_output=True, text=True
        ).stdout.strip()

    def rev(self, ref: str) -> str:
        return self.git("rev-parse", "--verify", "-q", ref)

    def branches(self) -> dict[str, str]:
        """The bot's branches on the forge: name → tip."""
        listed = self.git("for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
        return dict(line.split(" ") for line in listed.splitlines() if line.startswith("ichor/"))

    def move(self, branch: str, sha: str) -> None:
        """Someone else puts ``branch`` on the forge at ``sha``."""
        self.git("update-ref", f"refs/heads/{branch}", sha)

    def pushes(self) -> int:
        """Pushes that reached the forge's git (``POST git-receive-pack``)."""
        return len(self.fake.git.posts("git-receive-pack"))

    def leases(self) -> list[str]:
        """The ``--force-with-lease`` of every ``git push`` the worker ran in this test."""
        argvs = self.runs[-1].git_argvs()
        return [a for argv in argvs if "push" in argv for a in argv if a.startswith("--force-with")]

    def remote_argvs(self, run: WorkerRun) -> list[list[str]]:
        """The ``git push`` and ``git ls-remote`` command lines of this test's worker runs."""
        return [a for a in run.git_argvs() if "push" in a or "ls-remote" in a]

    def git_paths(self) -> set[str]:
        """The paths of every git request the forge served."""
        return {r.path for r in self.fake.git.requests}

    # ------------------------------------------------------------ the bot's records
    def audits(self) -> list[tuple[str, str, str, str | None]]:
        """(actor, verb, result, pull request URL) of the repository's audit records, oldest
        first."""
        records = RedisAudit(self.bot.redis).recent(repo=self.full_name)
        return [(r.actor, r.verb, r.result, r.pr_url) for r in reversed(records)]

    def locked(self) -> bool:
        """The repository's lock is held (by a worker)."""
        return bool(self.bot.redis.exists(f"ichor:repo-lock:{self.route}:{self.full_name}"))

    def approvals_key(self, number: int | None = None) -> str:
        return f"ichor:approvals:{self.route}:{self.full_name}:{number or self.number}"

    def stored_approvals(self) -> tuple[Approval, ...] | None:
        """What the bot's approval store in Redis holds for the pull request."""
        return RedisApprovals(self.bot.redis).approvals(
            pull_key(self.route, self.full_name, self.number)
        )

    def replied_approvals(self) -> tuple[Approval, ...]:
        """The approvals the bot's replies record, read back as a rebuild would read them."""
        listed = [ForgeComment(c.id, c.author, c.body, url=c.url) for c in self.comments()]
        return approvals_from_comments(listed, self.bot_name)

    # ------------------------------------------------------------ what the bot said
    def replies(self, number: int | None = None) -> list[str]:
        """The bot's comments on the pull request other than its summary, oldest first."""
        return [c.body for c in self._replies(number or self.number)]

    def reply_urls(self, number: int | None = None) -> list[str]:
        return [c.url for c in self._replies(number or self.number)]

    def _replies(self, number: int) -> list[Comment]:
        return [
            c
            for c in self.comments(number)
            if c.author == self.bot_name and "ichor:summary" not in c.body
        ]

    def summary(self) -> str:
        """The check's summary as the forge shows it (the one summary comment, or on GitHub
        the newest check run's)."""
        (summary,) = self.summary_comments()
        return summary

    def summary_url(self) -> str | None:
        """The address of the summary comment, if there is one."""
        urls = [c.url for c in self.comments() if "ichor:summary" in c.body]
        assert len(urls) <= 1, urls
        return urls[0] if urls else None

    def summary_comments(self, number: int | None = None) -> list[str]:
        """Every summary comment on the pull request."""
        return [c.body for c in self.comments(number) if "ichor:summary" in c.body]

    # ------------------------------------------------------------ the end of a test
    def secrets(self) -> list[str]:
        """The forge's tokens, as they are and in their Basic form."""
        raise NotImplementedError

    def leaks(self, text: str) -> bool:
        return any(secret in text for secret in self.secrets())

    def finish(self) -> None:
        """Nothing the forge would refuse, no lock left held, and the token (or its Basic form)
        nowhere the bot wrote or ran: no worker's log, git argv, object on the forge, pull
        request, comment or request body, nor any file of the worker."""
        self.assert_clean()
        assert not self.locked()
        assert self.runs, "no worker ran"
        assert any(run.git_argvs() for run in self.runs), "the shim recorded no git command"
        seen = [run.log for run in self.runs] + [self.bot.web_log.read_text()]
        seen += [json.dumps(argv) for run in self.runs for argv in run.git_argvs()]
        seen += [json.dumps(pull.__dict__) for pull in self.pulls()]
        seen += [c.body for pull in self.pulls() for c in self.comments(pull.number)]
        seen += [c.body for n in self.heads for c in self.comments(n)]
        seen += [c.body for n in self.heads for c in self.line_comments(n)]
        seen += self.posted
        seen.append(json.dumps(self.audits()))
        if self.bare.exists():
            seen.append(self.git("log", "--all", "-p", "--format=%H%n%an %ae%n%B"))
        assert [text[:200] for text in seen if self.leaks(text)] == []
        tokens = [secret.encode() for secret in self.secrets()]
        for path in self.data_dir.rglob("*"):  # the mirror's config, FETCH_HEAD, caches
            assert path.is_dir() or not any(t in path.read_bytes() for t in tokens), path
        for key in self.bot.redis.scan_iter(f"ichor:onboarding:*:{self.route}:{self.full_name}"):
            self.bot.redis.delete(key)

    def assert_clean(self) -> None:
        """Nothing the forge would refuse (but the validation errors the test expects)."""
        assert all(r.authorized for r in self.fake.git.requests)  # the token on every one
        if self.tolerated is None:
            self.fake.assert_clean()
            return
        errors = self.fake.validation_errors
        assert errors and all(self.tolerated in e for e in errors), errors
        assert self.fake.auth_failures == [] and self.fake.response_errors == []

    # ------------------------------------------------------------ each forge's own
    def deliver(self, payload: dict[str, Any]) -> None:
        """A pull request's webhook."""
        raise NotImplementedError

    def deliver_comment(self, comment: Any, *, action: str = "created") -> int:
        """A comment's webhook (``action``: created or edited); the answer's status."""
        raise NotImplementedError

    def deliver_push(self, before: str, after: str, ref: str = "refs/heads/main") -> None:
        """The webhook of a push that moved ``ref`` from ``before`` to ``after``."""
        raise NotImplementedError

    def deliver_repository_created(self) -> None:
        """The webhook of a hook above the repository (GitLab's system hook, a Gitea or
        Forgejo organisation's webhook) saying the repository was created."""
        raise NotImplementedError

    def edit_comment(self, comment: Any, body: str) -> Any:
        raise NotImplementedError

    def buttons(self) -> list[str]:
        """The identifiers of the newest check's buttons."""
        return []

    def reactions(self, comment: Any) -> list[str]:
        """The bot's reactions to ``comment``."""
        raise NotImplementedError

    def verdict(self, sha: str | None = None) -> tuple[str, str]:
        """The newest check's (state, title or description) on ``sha`` (the head)."""
        raise NotImplementedError

    def states(self, sha: str) -> list[str]:
        """Every state the checks of ``sha`` went through, in order."""
        raise NotImplementedError

    def check_names(self, sha: str) -> set[str]:
        """The names of the checks (or statuses) of ``sha``."""
        raise NotImplementedError

    def verdict_url(self, sha: str) -> str | None:
        """Where the newest verdict on ``sha`` links to (a status's target), if anywhere."""
        raise NotImplementedError

    def flaky(self) -> None:
        """The check's first write to the forge answers 502, and a later one 429, once each
        (Retry-After: 1), as a forge under load does."""
        raise NotImplementedError

    def checked(self, *finals: str) -> list[str]:
        """The :meth:`states` that checks ending in ``finals``, one after another, leave."""
        raise NotImplementedError

    def line_comments(self, number: int | None = None) -> list[LineComment]:
        raise NotImplementedError

    def pulls(self) -> list[Pull]:
        """Every pull request of the repository, oldest first."""
        raise NotImplementedError

    def bot_pulls(self) -> list[Pull]:
        """The open pull requests the bot opened."""
        return [p for p in self.pulls() if p.author == self.bot_name and p.state == "open"]

    def plant(self, branch: str, body: str, *, sha: str | None = None, state: str = "open") -> Pull:
        """A pull request of the bot from ``branch`` (put at ``sha``, main's tip when None)
        into main, with ``body``, open or closed."""
        raise NotImplementedError

    def fail_permission_lookups(self, status: int, user: str) -> None:
        """Every lookup of ``user``'s permission answers ``status``."""
        raise NotImplementedError

    def fail_pull_lookups(self, status: int) -> None:
        """Every look-up of an open pull request by its branches answers ``status``."""
        raise NotImplementedError

    def lookups(self) -> list[tuple[str, str]]:
        """(head branch, base branch) of each look-up of an open pull request by its branches
        since the calls were reset, in order."""
        raise NotImplementedError

    def url_of(self, comment: Any) -> str:
        """The web address of ``comment``."""
        (url,) = [c.url for c in self.comments(comment["number"]) if c.id == str(comment["id"])]
        return url

    def _pull_request(self, number: int, head: str, base: str, fork: bool) -> dict[str, Any]:
        raise NotImplementedError

    def _add_comment(self, number: int, body: str, user: str) -> Any:
        raise NotImplementedError

    def comments(self, number: int | None = None) -> list[Comment]:
        """Every comment on the pull request, the bot's and anyone's, oldest first."""
        raise NotImplementedError


class GitHubShaped(Forge):
    """A forge whose API writes comments and pull requests as GitHub's does (GitHub, Gitea):
    its fake lists them in that shape, read here once."""

    def pulls(self) -> list[Pull]:
        return [Pull.of(p) for p in self.fake.pulls(self.full_name)]

    def comments(self, number: int | None = None) -> list[Comment]:
        number = number or self.number
        return [
            Comment(str(c["id"]), c["user"]["login"], c["body"], c["html_url"])
            for c in self.fake.comments(self.full_name, number)
        ]
