"""End to end on Gitea: change commands (design.md 5, 6). A signed ``issue_comment`` webhook →
``ichor-bot serve`` → Redis → a real ``ichor-bot worker`` → a real ``git push`` (through
``git http-backend`` behind the fake, which wants the token for every request) → a pull request
on the fake Gitea, exactly once, or a reply saying why not and nothing pushed.

The repository has an approval target (``prod``: ConfigMaps, ``data.state``) and a relaxed one;
pull request 7 (``alice``'s, from a branch of the repository) adds a foreign file to prod.
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.changes.plan import BOOTSTRAP_IGNORE
from bot.state.redis_state import RedisAudit
from tests.e2e.gitea_scenario import GiteaScenario
from tests.e2e.harness import Bot, WorkerRun, running_bot
from tests.fakeforge.gitea import FakeGitea

CONFIG = """version: 1
targets:
  - name: prod
    path: clusters/prod
    approval: {kind: ConfigMap, field: data.state, reasonField: data.decision, fields: [data.mode]}
  - {name: staging, path: clusters/staging}
commands:
  min_permission: write
"""
SETTINGS = "clusters/prod/v1/configmaps/web/settings.yaml"
ORIGINAL = """# the web tier's settings
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings  # do not rename
  namespace: web
data:
  mode: prod
  state: pending
"""
APPROVED = (
    ORIGINAL.replace("mode: prod", "mode: canary").replace("state: pending", "state: approved")
    + "  decision: approved by maria\n"
)
# Widgets are followable only through the CRD in the target: deleting it refuses the Widget.
CRD = "clusters/prod/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com.yaml"
CRD_TEXT = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
"""
WIDGET = "clusters/prod/example.com/v1/widgets/web/w.yaml"
WIDGET_TEXT = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: web}\n"
AUTHOR, MAINTAINER, READER = "alice", "maria", "rita"
NUMBER = 7
APPROVE = "/approve web/settings mode=canary"
BRANCH = "ichor/approve-web-settings"  # readable: no other object holds it
IDENTITY = "ichor-bot <ichor-bot@users.noreply.127.0.0.1>"  # the token's user, on the forge's host


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


@pytest.fixture(params=["gitea"])
def fake(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FakeGitea]:
    with FakeGitea(tmp_path / "forge-git", flavor=request.param) as running:
        yield running


class Changes(GiteaScenario):
    """The repository, its pull request, and what the bot did on it."""

    def __init__(
        self, fake: FakeGitea, bot: Bot, tmp_path: Path, more: dict[str, str | None] | None = None
    ) -> None:
        """``more``: files of the base besides the approval target's ConfigMap and Widget."""
        super().__init__(fake, bot, tmp_path)
        for user, permission in ((AUTHOR, "write"), (MAINTAINER, "write"), (READER, "read")):
            fake.set_permission(self.full_name, user, permission)
        extra: dict[str, str | None] = {
            ".ichor.yaml": CONFIG,
            SETTINGS: ORIGINAL,
            CRD: CRD_TEXT,
            WIDGET: WIDGET_TEXT,
            **(more or {}),
        }
        self.base_sha = self.base(extra)
        self.work.checkout("feature", create_from=self.base_sha)
        self.head = self.work.commit({"clusters/prod/notes.txt": "todo\n"})
        self.pull(NUMBER, self.head, self.base_sha)
        self.posted: list[str] = []  # every API request body the bot sent

    def ask(self, body: str, *, user: str = MAINTAINER, number: int = NUMBER) -> WorkerRun:
        """``user`` comments ``body``; one worker run, with the forge calls of it alone."""
        self.fake.reset_calls()
        comment = self.fake.add_comment(self.full_name, number, body, user=user)
        assert self.deliver_comment(comment) == 202
        run = self.work_once()
        self.posted += [json.dumps(c.json) for c in self.fake.calls if c.json is not None]
        return run

    def replies(self, number: int = NUMBER) -> list[str]:
        return [
            c["body"]
            for c in self.fake.comments(self.full_name, number)
            if c["user"]["login"] == self.fake.bot_login
        ]

    def ichor_pulls(self) -> list[dict[str, Any]]:
        """The open pull requests on the bot's branches."""
        listed = self.fake.pulls(self.full_name)
        return [p for p in listed if p["head"]["ref"].startswith("ichor/") and p["state"] == "open"]

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "--git-dir", str(self.bare), *args], check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    def branches(self) -> dict[str, str]:
        listed = self.git("for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
        return dict(line.split(" ") for line in listed.splitlines() if line.startswith("ichor/"))

    def move(self, sha: str, branch: str = BRANCH) -> None:
        """Someone else puts ``branch`` on the forge at ``sha``."""
        self.git("update-ref", f"refs/heads/{branch}", sha)

    def audits(self) -> list[tuple[str, str, str | None]]:
        """(verb, result, pull request URL) of this repository's audit records, oldest first."""
        records = RedisAudit(self.bot.redis).recent(repo=self.full_name)
        return [(r.verb, r.result, r.pr_url) for r in reversed(records)]

    def pushes(self) -> int:
        return len(self.fake.git.posts("git-receive-pack"))

    def remote_argvs(self, run: WorkerRun) -> list[list[str]]:
        """The worker's ``git push`` and ``git ls-remote`` command lines (all of this test's)."""
        return [a for a in run.git_argvs() if "push" in a or "ls-remote" in a]

    def done(self) -> None:
        """Nothing the forge would refuse, every git request with the token, and the token (or
        its Basic form) in no log, git argv, pushed object, pull request or posted body."""
        self.fake.assert_clean()
        assert all(r.authorized for r in self.fake.git.requests)
        raw = f"{self.fake.token}:x-oauth-basic".encode()
        secrets = (self.fake.token, base64.b64encode(raw).decode())
        objects = subprocess.run(
            ["git", "--git-dir", str(self.bare), "cat-file", "--batch-all-objects", "--batch"],
            check=True,
            capture_output=True,
        ).stdout.decode(errors="replace")
        seen = [run.log for run in self.runs] + [self.bot.web_log.read_text(), objects]
        seen.append(json.dumps(self.fake.pulls(self.full_name)))
        seen += [json.dumps(a) for run in self.runs for a in run.git_argvs()]
        seen += self.posted + self.replies() + self.replies(8)
        seen.append(json.dumps(self.audits()))
        assert not [text for text in seen for secret in secrets if secret in text]
        assert not self.bot.redis.exists(f"ichor:repo-lock:gitea:{self.full_name}")


@pytest.fixture
def pr(fake: FakeGitea, bot: Bot, tmp_path: Path) -> Changes:
    return Changes(fake, bot, tmp_path)


def approve_body(link: str) -> str:
    return f"""<!-- ichor:change approve ["prod","","ConfigMap","web","settings"] -->
Marks ConfigMap web/settings as approved.

Requested by maria in [this comment]({link}).

### Impact

- **Target**: prod
- **Objects**:
  - ConfigMap web/settings
- **Files**:
  - <code>{SETTINGS}</code>

| field | before | after |
| --- | --- | --- |
| data.state | pending | approved |
| data.mode | prod | canary |
| data.decision | *(none)* | approved by maria |

**The gate on the result**: accepted

This branch belongs to Ichor Bot: a new identical request finds this pull request instead of \
opening another. Review and merge it as any change."""


def comment_link(pr: Changes, number: int = NUMBER) -> str:
    newest = pr.fake.comments(pr.full_name, number)[-2]  # the command, then the bot's reply
    assert newest["user"]["login"] != pr.fake.bot_login
    return f"{pr.fake.url}/{pr.full_name}/pulls/{number}#issuecomment-{newest['id']}"


def opened(pr: Changes, run: WorkerRun, branch: str = BRANCH) -> dict[str, Any]:
    """The one pull request of the bot, on ``branch``, and the reply that names it."""
    (pull,) = pr.ichor_pulls()
    assert pull["head"]["ref"] == branch, run.log[-3000:]
    assert pr.replies()[-1] == f"Opened {pull['html_url']} for `/{branch[6:].split('-')[0]}`."
    assert pr.branches() == {branch: pull["head"]["sha"]}
    return pull


def pushed_approval(pr: Changes, expected: str | None, run: WorkerRun) -> None:
    """The approval commit on the base tip, and its push leased on ``expected`` (None: the
    branch must not exist)."""
    pull = opened(pr, run)
    assert pr.git("rev-parse", f"{BRANCH}^") == pr.base_sha
    assert pr.git("diff", "--name-only", pr.base_sha, BRANCH) == SETTINGS
    assert pr.git("show", f"{BRANCH}:{SETTINGS}") + "\n" == APPROVED
    lease = f"--force-with-lease=refs/heads/{BRANCH}:{expected or ''}"
    assert [a[-3:] for a in pr.remote_argvs(run) if "push" in a][-1] == [
        lease,
        "origin",
        f"{pull['head']['sha']}:refs/heads/{BRANCH}",
    ]


@pytest.mark.parametrize("fake", ["gitea", "forgejo"], indirect=True)
def test_approve_opens_one_pull_request_and_a_second_ask_finds_it(pr: Changes) -> None:
    run = pr.ask(APPROVE)
    assert pr.pushes() == 1, run.log[-3000:]
    pushed_approval(pr, None, run)
    (pull,) = pr.ichor_pulls()
    assert pr.replies() == [f"Opened {pull['html_url']} for `/approve`."]
    assert (pull["base"]["ref"], pull["user"]["login"]) == ("main", pr.fake.bot_login)
    assert pull["title"] == "ichor: approve ConfigMap web/settings"
    link = comment_link(pr)
    assert pull["body"] == approve_body(link)
    assert pr.git("log", "-1", "--format=%an <%ae>|%cn <%ce>|%B", BRANCH) == (
        f"{IDENTITY}|{IDENTITY}|"
        "ichor: approve ConfigMap web/settings\n\nMarks ConfigMap web/settings as approved.\n\n"
        f"Requested-in: {link}\nRequested-by: maria\n"
        'Ichor-Change: approve ["prod","","ConfigMap","web","settings"]'
    )
    remote = pr.remote_argvs(run)

    again = pr.ask(APPROVE)
    assert pr.replies()[-1] == (
        f"A pull request for this `/approve` is already open: {pull['html_url']} "
        "(nothing was pushed)."
    )
    assert pr.pushes() == 1 and pr.ichor_pulls() == [pull]
    assert pr.remote_argvs(again) == remote  # no ls-remote, no push
    url = pull["html_url"]
    assert pr.audits() == [("approve", "pr-opened", url), ("approve", "pr-existing", url)]
    pr.done()


def test_a_leftover_branch_without_a_pull_request_is_replaced_under_a_lease(
    pr: Changes,
) -> None:
    pr.move(pr.head)  # an old ichor/ branch, its pull request closed
    user = pr.fake.bot_login
    pr.fake.add_pull(pr.full_name, head_sha=pr.head, head_ref=BRANCH, state="closed", user=user)
    run = pr.ask(APPROVE)
    assert pr.pushes() == 1
    pushed_approval(pr, pr.head, run)
    assert [p["number"] for p in pr.ichor_pulls()] == [NUMBER + 2]  # not the closed one
    # Gitea's lookup by base and head names the closed one: the open ones are listed too.
    assert f"GET /api/v1/repos/{pr.full_name}/pulls 200" in pr.fake.calls_summary()
    pr.done()


def test_a_branch_moved_after_it_was_read_is_read_again_once(pr: Changes) -> None:
    held: list[int] = []  # the repository's lock, seen from the forge during the push

    def move() -> None:
        held.append(pr.bot.redis.exists(f"ichor:repo-lock:gitea:{pr.full_name}"))
        pr.move(pr.head)

    pr.fake.before_push(move)
    run = pr.ask(APPROVE)
    assert pr.pushes() == 2 and held == [1]
    assert "trying again from a new fetch" in run.log
    pushed_approval(pr, pr.head, run)  # the second push leases on what it read then
    pr.done()


def test_a_branch_that_keeps_moving_is_an_error_and_no_pull_request(pr: Changes) -> None:
    moves = iter([pr.head, pr.base_sha])
    pr.fake.before_push(lambda: pr.move(next(moves)), times=2)
    run = pr.ask(APPROVE)
    assert pr.pushes() == 2
    (reply,) = pr.replies()
    assert reply.startswith(
        "`/approve` could not be completed; nothing was changed. The error:\n\n"
        f"    the branch kept moving while it was pushed: {BRANCH} moved on "
        f"{pr.fake.clone_url(pr.full_name)} since it was read (expected {pr.head}): "
    ), run.log[-3000:]
    assert pr.ichor_pulls() == [] and pr.branches() == {BRANCH: pr.base_sha}
    assert [(verb, result[:6]) for verb, result, _ in pr.audits()] == [("approve", "error:")]
    pr.done()


@pytest.mark.parametrize("status", [503, 403])
def test_a_failed_pull_request_lookup_is_an_error_and_nothing_is_pushed(
    pr: Changes, status: int
) -> None:
    lookup = f"/api/v1/repos/{pr.full_name}/pulls/main/ichor%2F{BRANCH.removeprefix('ichor/')}"
    pr.fake.inject("GET", lookup, status=status, headers={"retry-after": "0"}, times=None)
    run = pr.ask(APPROVE)
    assert pr.replies() == [
        "`/approve` could not be completed; nothing was changed. The error:\n\n"
        f"    Gitea GET {lookup.removeprefix('/api/v1')}: {status} "
        f"{'Service Unavailable' if status == 503 else 'Forbidden'}: injected fault"
    ]
    calls = pr.fake.calls_summary()
    assert calls.count(f"GET {lookup} {status}") == (5 if status == 503 else 1), calls
    assert not [c for c in calls if c.startswith(f"POST /api/v1/repos/{pr.full_name}/pulls ")]
    assert pr.pushes() == 0 and pr.remote_argvs(run) == [] and pr.branches() == {}
    pr.done()


def test_a_reader_is_refused_once_and_nothing_is_pushed(pr: Changes) -> None:
    run = pr.ask(APPROVE, user=READER)
    assert pr.replies() == [
        "`/approve` was not run: it needs `write` permission on this repository, and @rita "
        "has `read`."
    ]
    assert pr.ichor_pulls() == [] and pr.pushes() == 0 and pr.remote_argvs(run) == []
    pr.done()


def test_an_ignore_that_would_hide_managed_files_is_refused(pr: Changes) -> None:
    run = pr.ask("/ignore * in prod\n/ignore v1/ in prod")
    assert pr.replies() == [
        "`/ignore` changed nothing: '&#42;' would ignore every file of the target.\n\n---\n\n"
        f"`/ignore` changed nothing: 'v1/' would shadow the managed file '{SETTINGS}'."
    ]
    assert pr.ichor_pulls() == [] and pr.pushes() == 0 and pr.remote_argvs(run) == []
    pr.done()


def test_ignore_on_a_same_repository_pull_request_goes_into_its_branch(pr: Changes) -> None:
    run = pr.ask("/ignore notes.txt in prod")
    branch = "ichor/ignore-prod-pr7"
    pull = opened(pr, run, branch)
    assert (pull["base"]["ref"], pull["title"]) == ("feature", "ichor: ignore notes.txt in prod")
    assert pull["body"].startswith(
        "<!-- ichor:change -->\nIgnores /notes.txt in target prod: creates it with the line in "
        "<code>clusters/prod/.gittargetignore</code>.\n\n"
        f"Requested by maria in [this comment]({comment_link(pr)}).\n\n"
    )
    assert "| .gittargetignore | *(none)* | /notes.txt |" in pull["body"]
    assert "**The gate on the result**: accepted" in pull["body"]
    # Its parent is the pull request's head: merging it fixes the pull request.
    assert pr.git("rev-parse", f"{branch}^") == pr.head
    ignore = "clusters/prod/.gittargetignore"
    assert pr.git("diff", "--name-only", pr.head, branch) == ignore
    assert pr.git("show", f"{branch}:{ignore}") + "\n" == BOOTSTRAP_IGNORE + "/notes.txt\n"
    pr.ask("/ignore notes.txt in prod")  # found by its head and the pull request's branch
    assert pr.replies()[-1].startswith(
        f"A pull request for this `/ignore` is already open: {pull['html_url']} "
    )
    assert pr.pushes() == 1 and pr.ichor_pulls() == [pull]
    pr.done()


def test_ignore_on_a_fork_replies_with_the_line_to_add(pr: Changes) -> None:
    pr.pull(8, pr.head, pr.base_sha, fork="someone/gitops")
    run = pr.ask("/ignore notes.txt in prod", number=8)
    assert pr.replies(8) == [
        "This pull request comes from a fork, so the bot cannot push to its branch. To ignore "
        "the file, add this line to the `.gittargetignore` of target `prod` in the pull "
        "request:\n\n    /notes.txt"
    ]
    assert pr.ichor_pulls() == [] and pr.pushes() == 0 and pr.remote_argvs(run) == []
    pr.done()


def test_a_change_the_gate_would_refuse_is_not_pushed(pr: Changes) -> None:
    run = pr.ask("/delete CustomResourceDefinition _/widgets.example.com in prod")
    (reply,) = pr.replies()
    assert reply.startswith(
        "`/delete` changed nothing: the gate would refuse the result, with a new issue: "
        "not-followable in clusters/prod/"
    ), run.log[-3000:]
    assert pr.ichor_pulls() == [] and pr.pushes() == 0 and pr.branches() == {}
    pr.done()
