"""End to end on GitHub, change PRs when things go wrong (design.md 5, 6), as the GitLab and Gitea
modules do: a leftover branch replaced under a lease, a push that loses a race (once, then
twice), a failing open-pull-request lookup, ``/ignore`` on a fork, a change the gate would
refuse. Every test ends by searching everything the bot wrote or ran for the token
(:meth:`Faults.finish`)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.state.redis_state import RedisAudit
from tests.e2e.harness import Bot, WorkerRun, pull_request_payload, running_bot
from tests.e2e.test_github_changes import AUTHOR, CONFIG, ORIGINAL, SETTINGS, Commands, git, pushes
from tests.fakeforge import FakeGitHub
from tests.fakeforge.fixtures import fake_github  # noqa: F401 - the fixture

BRANCH = "ichor/approve-web-settings"  # readable: no other object holds it
APPROVE = "/approve web/settings mode=canary"
LEASE = f"--force-with-lease=refs/heads/{BRANCH}:"
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
FORK = "forker/gitops"
ERROR = "`/approve` could not be completed; nothing was changed. The error:\n\n    "


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


class Faults(Commands):
    """:class:`Commands` on the change-PR repository, remembering every worker run."""

    def __init__(self, fake: FakeGitHub, bot: Bot, tmp_path: Path) -> None:
        extra: dict[str, str | None] = {SETTINGS: ORIGINAL, CRD: CRD_TEXT, WIDGET: WIDGET_TEXT}
        self.runs: list[WorkerRun] = []
        super().__init__(fake, bot, tmp_path, config=CONFIG, extra=extra)

    def work_once(self) -> WorkerRun:
        run = super().work_once()
        self.runs.append(run)
        return run

    def ask(self, body: str) -> tuple[str, WorkerRun]:
        """The maintainer comments ``body``: the bot's one new reply, and the worker's run."""
        before = len(self.replies())
        self.comment(body)
        run = self.work_once()
        replies = self.replies()
        assert len(replies) == before + 1, (replies, run.log[-3000:])
        return replies[-1], run

    def rev(self, ref: str) -> str:
        return git(self.bare, "rev-parse", "--verify", "-q", ref).strip()

    def branches(self) -> dict[str, str]:
        listed = git(self.bare, "for-each-ref", "--format=%(refname:short) %(objectname)")
        pairs = (line.split(" ") for line in listed.splitlines())
        return {ref: sha for ref, sha in pairs if ref.startswith("ichor/")}

    def move(self, sha: str, branch: str = BRANCH) -> None:
        """Someone else puts ``branch`` on the forge at ``sha``."""
        git(self.bare, "update-ref", f"refs/heads/{branch}", sha)

    def ichor_pulls(self) -> list[dict[str, Any]]:
        listed = self.fake.pulls(self.full_name)
        return [p for p in listed if p["head"]["ref"].startswith("ichor/") and p["state"] == "open"]

    def leases(self) -> list[str]:
        """The ``--force-with-lease`` of every ``git push`` the worker ran in this test."""
        argvs = self.runs[-1].git_argvs()
        return [a for argv in argvs if "push" in argv for a in argv if a.startswith("--force-with")]

    def audits(self) -> list[tuple[str, str, str | None]]:
        """(verb, result, pull request URL) of this repository's audit records, oldest first."""
        records = RedisAudit(self.bot.redis).recent(repo=self.full_name)
        return [(r.verb, r.result, r.pr_url) for r in reversed(records)]

    def locked(self) -> bool:
        """The repository's lock is held (by a worker)."""
        return bool(self.bot.redis.exists(f"ichor:repo-lock:github:{self.full_name}"))

    def finish(self) -> None:
        """Nothing the forge would refuse, and no token (nor its Basic form) in a worker's
        log, a git argv, a pushed object, a pull request, a reply or any API request body."""
        self.assert_clean()
        tokens = self.fake.tokens
        assert tokens, "the bot used no installation token"
        secrets = [*tokens]
        secrets += [base64.b64encode(f"x-access-token:{t}".encode()).decode() for t in tokens]
        objects = git(self.bare, "log", "--all", "-p", "--format=%H%n%an %ae%n%B")
        seen = [run.log for run in self.runs] + [objects, self.bot.web_log.read_text()]
        assert self.runs[-1].git_argvs(), "the shim recorded no git command"
        seen += [json.dumps(argv) for argv in self.runs[-1].git_argvs()]
        seen.append(json.dumps(self.fake.pulls(self.full_name)))
        seen += [json.dumps(c) for n in (7, 8) for c in self.fake.comments(self.full_name, n)]
        seen += [c.body.decode("utf-8", "replace") for c in self.fake.calls]
        leaked = [text[:200] for text in seen for secret in secrets if secret in text]
        assert leaked == []
        for path in self.data_dir.rglob("*"):  # the mirror's config, FETCH_HEAD, caches
            assert path.is_dir() or not any(t.encode() in path.read_bytes() for t in tokens), path
        assert not self.locked()


@pytest.fixture
def pr(fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> Iterator[Faults]:  # noqa: F811
    scenario = Faults(fake_github, bot, tmp_path)
    scenario.push({"clusters/prod/notes.txt": "todo\n"})
    yield scenario
    scenario.finish()


def assert_approved(pr: Faults, reply: str) -> None:
    """One pull request of the bot on ``BRANCH``, named in ``reply``: one commit on main's
    tip, changing only the approval's lines."""
    (pull,) = pr.ichor_pulls()
    assert (pull["head"]["ref"], pull["base"]["ref"]) == (BRANCH, "main")
    assert reply == f"Opened {pull['html_url']} for `/approve`."
    assert pr.branches() == {BRANCH: pull["head"]["sha"]}
    assert pr.rev(f"{BRANCH}^") == pr.base
    assert git(pr.bare, "diff", "--name-only", pr.base, BRANCH).split() == [SETTINGS]
    assert git(pr.bare, "show", f"{BRANCH}:{SETTINGS}") == APPROVED


def test_a_leftover_branch_without_a_pull_request_is_replaced_under_a_lease(pr: Faults) -> None:
    pr.move(pr.head)  # an old ichor/ branch, its pull request gone
    reply, run = pr.ask(APPROVE)
    assert pr.leases() == [LEASE + pr.head], run.log[-3000:]  # the value just read
    assert pushes(pr.fake) == 1
    assert_approved(pr, reply)
    (pull,) = pr.ichor_pulls()
    assert pr.audits() == [("approve", "pr-opened", pull["html_url"])]


def test_a_branch_moved_after_it_was_read_is_read_again_once(pr: Faults) -> None:
    held: list[bool] = []  # the repository's lock, seen from the forge during the push

    def move() -> None:
        held.append(pr.locked())
        pr.move(pr.head)

    pr.fake.before_push(move)
    reply, run = pr.ask(APPROVE)
    assert pushes(pr.fake) == 2 and held == [True], run.log[-3000:]
    assert "trying again from a new fetch" in run.log
    assert pr.leases() == [LEASE, LEASE + pr.head]  # the second leases on what it read then
    assert_approved(pr, reply)


def test_a_branch_that_keeps_moving_is_an_error_and_no_pull_request(pr: Faults) -> None:
    moves = iter([pr.head, pr.base])
    pr.fake.before_push(lambda: pr.move(next(moves)), times=2)
    reply, run = pr.ask(APPROVE)
    assert pushes(pr.fake) == 2
    assert pr.leases() == [LEASE, LEASE + pr.head]
    assert reply.startswith(
        f"{ERROR}the branch kept moving while it was pushed: {BRANCH} moved on "
        f"{pr.fake.clone_url(pr.full_name)} since it was read (expected {pr.head}): "
    ), run.log[-3000:]
    assert pr.ichor_pulls() == []
    assert pr.branches() == {BRANCH: pr.base}  # the other writer's commit is kept
    assert [(verb, result[:6], url) for verb, result, url in pr.audits()] == [
        ("approve", "error:", None)
    ]


@pytest.mark.parametrize(("status", "attempts"), [(503, 5), (403, 1)])
def test_a_failed_pull_request_lookup_is_an_error_and_nothing_is_pushed(
    pr: Faults, status: int, attempts: int
) -> None:
    pr.fake.inject_pull_lookup_failure(status, full_name=pr.full_name, times=None)
    calls = len(pr.fake.calls)
    reply, run = pr.ask(APPROVE)
    owner = pr.full_name.split("/")[0]
    lookup = f"/repos/{pr.full_name}/pulls"
    query = f"state=open&head={owner}%3Aichor%2F{BRANCH.removeprefix('ichor/')}&base=main"
    shown = "503 Service Unavailable" if status == 503 else "403 Forbidden"
    assert reply == f"{ERROR}GitHub GET {lookup}?{query}: {shown}"
    listed = [c for c in pr.fake.calls[calls:] if c.path == lookup]
    assert [(c.method, c.status) for c in listed] == [("GET", status)] * attempts
    head = f"{owner}:{BRANCH}"
    assert all(c.query == {"state": "open", "head": head, "base": "main"} for c in listed)
    assert pushes(pr.fake) == 0 and pr.branches() == {} and pr.ichor_pulls() == []
    assert [a for a in run.git_argvs() if "push" in a] == []


def test_ignore_on_a_fork_replies_with_the_line_to_add(pr: Faults) -> None:
    # Pull request 8, of the same head, from a fork: GitHub keeps its head as refs/pull/8/head.
    pr.work.set_ref("refs/pull/8/head", pr.head)
    pr.work.publish(pr.bare)
    pr.fake.add_pull(
        pr.full_name, 8, head_sha=pr.head, base_sha=pr.base, user=AUTHOR, head_repo=FORK
    )
    payload = pull_request_payload(
        full_name=pr.full_name,
        clone_url=pr.fake.clone_url(pr.full_name),
        number=8,
        head_sha=pr.head,
        base_sha=pr.base,
        fork=FORK,
    )
    payload["pull_request"]["user"]["login"] = AUTHOR
    assert pr.bot.post("pull_request", payload) == 202
    pr.work_once()
    pr.number = 8
    reply, _ = pr.ask("/ignore notes.txt in prod")
    assert reply == (
        "This pull request comes from a fork, so the bot cannot push to its branch. To ignore "
        "the file, add this line to the `.gittargetignore` of target `prod` in the pull "
        "request:\n\n    /notes.txt"
    )
    assert pushes(pr.fake) == 0 and pr.branches() == {} and pr.ichor_pulls() == []


def test_a_change_the_gate_would_refuse_is_not_pushed(pr: Faults) -> None:
    reply, run = pr.ask("/delete CustomResourceDefinition _/widgets.example.com in prod")
    assert reply.startswith(
        "`/delete` changed nothing: the gate would refuse the result, with a new issue: "
        "not-followable in clusters/prod/"
    ), run.log[-3000:]
    assert pushes(pr.fake) == 0 and pr.branches() == {} and pr.ichor_pulls() == []
    assert [a for a in run.git_argvs() if "push" in a] == []
    ((verb, result, url),) = pr.audits()
    assert (verb, url) == ("delete", None) and result.startswith("refused: the gate would refuse")
