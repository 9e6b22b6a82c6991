"""GitHub merge queues end to end (design.md 4, 5.1): real ``ichor-bot serve`` and ``worker``
processes on Redis, the fake GitHub. The queue builds a merge group on a ``gh-readonly-queue/…``
branch and asks for its checks (``merge_group``) while the push of that branch arrives too; the
group's head gets one check run, whichever comes first, judged against the queue's base, with
the approvals given on its pull requests; a destroyed group gets nothing more."""

from __future__ import annotations

from typing import Any

import pytest

from bot.checks.markdown_text import short_sha
from tests.e2e.drivers import GitHub
from tests.e2e.test_commands import STRICT
from tests.support.gitops import configmap

WEB = "clusters/prod/v1/configmaps/web"
RELAXED = STRICT.replace("mode: strict", "mode: relaxed")


def runs_on(github: GitHub, sha: str) -> list[dict[str, Any]]:
    return [r for r in github.check_runs() if r["head_sha"] == sha]


def open_pulls(github: GitHub, config: str, *changes: dict[str, str | None]) -> list[str]:
    """The base with ``config``, and pull requests 21, 22 … of ``changes``, each from main and
    checked alone; their heads."""
    base = github.base(config=config)
    heads = []
    for n, files in enumerate(changes, start=21):
        github.local.checkout(f"pr-{n}", create_from=base)
        heads.append(github.commit(files))
        github.pull_request(heads[-1], number=n)
    github.work()
    return heads


def test_a_merge_group_gets_its_check_on_its_head(github: GitHub) -> None:
    (head21,) = open_pulls(github, RELAXED, {f"{WEB}/extra.yaml": configmap("extra")})
    assert github.verdict(head21)[0] == "success"
    base = github.base_sha
    head, ref = github.queue((21,))
    assert github.deliver_merge_group(head, ref, base) == 202
    github.reset_calls()
    github.work()
    (run,) = runs_on(github, head)
    assert (run["status"], run["conclusion"]) == ("completed", "success")
    assert run["output"]["title"] == "1 touched target accepted"
    summary = run["output"]["summary"]
    assert f"Checked {short_sha(head)} against base {short_sha(base)}." in summary
    assert "This is a merge group of pull request #21" in summary
    assert run["actions"] == []  # no button on a merge group
    repo = f"/repos/{github.full_name}"
    assert github.calls() == [
        "POST /app/installations/42/access_tokens 201",
        f"POST {repo}/check-runs 201",
        f"PATCH {repo}/check-runs/{run['id']} 200",
    ]
    github.finish()


def test_two_pull_requests_accepted_alone_fail_together_in_the_queue(github: GitHub) -> None:
    """Each adds ConfigMap web/twin, in a file of its own: alone each is accepted, but the
    queue merges both, and there the object is defined twice. GitHub queues them as a chain:
    #22's group is built on #21's."""
    twin = configmap("twin")
    head21, head22 = open_pulls(
        github, RELAXED, {f"{WEB}/twin.yaml": twin}, {f"{WEB}/twin2.yaml": twin}
    )
    assert [github.verdict(h)[0] for h in (head21, head22)] == ["success", "success"]
    first, first_ref = github.queue((21,))
    second, second_ref = github.queue((22,), base=first)
    assert github.deliver_merge_group(first, first_ref, github.base_sha) == 202
    assert github.deliver_merge_group(second, second_ref, first) == 202
    github.work()
    ((one,), (two,)) = runs_on(github, first), runs_on(github, second)
    assert one["conclusion"] == "success"
    assert two["conclusion"] == "failure"
    assert two["output"]["title"] == "1 target refused · 1 new issue"
    (note,) = two["output"]["annotations"]  # on the file the group's own change adds
    assert (note["path"], note["title"]) == (f"{WEB}/twin2.yaml", "duplicate-identity")
    assert f"{WEB}/twin.yaml" in note["message"]
    github.finish()


@pytest.mark.parametrize("first", ["merge_group", "push"])
def test_the_event_and_the_push_of_the_groups_branch_make_one_check_run(
    github: GitHub, first: str
) -> None:
    open_pulls(github, RELAXED, {f"{WEB}/extra.yaml": configmap("extra")})
    base = github.base_sha
    head, ref = github.queue((21,))

    def event() -> int:
        return github.deliver_merge_group(head, ref, base)

    def push() -> int:
        return github.deliver_queue_push(head, ref)

    one, two = (event, push) if first == "merge_group" else (push, event)
    assert one() == 202
    assert two() == 200  # the same job: already queued
    github.work()
    assert two() == 200  # and once it ran
    github.work()
    (run,) = runs_on(github, head)
    assert run["conclusion"] == "success"
    # The push alone names the base by the branch's name: the same comparison as the event.
    assert "This is a merge group of pull request #21" in run["output"]["summary"]
    github.finish()


def test_a_destroyed_group_gets_nothing_posted_after(github: GitHub) -> None:
    open_pulls(github, RELAXED, {f"{WEB}/extra.yaml": configmap("extra")})
    base = github.base_sha
    head, ref = github.queue((21,))
    assert github.deliver_merge_group(head, ref, base) == 202
    assert github.deliver_merge_group(head, ref, base, action="destroyed") == 202
    assert github.deliver_queue_push(head, ref) == 200  # a late push: the same, ended job
    github.reset_calls()
    run = github.work()
    assert runs_on(github, head) == []
    assert github.calls() == []  # not even a token: the job ended before asking the forge
    assert "its merge group ended" in run.log
    github.finish()


def test_approvals_on_the_queued_pull_request_carry_over(github: GitHub) -> None:
    """#21's new object in a strict target was approved on #21: its group passes. #22's was
    not: its group fails, since nobody can approve a merge group."""
    head21, head22 = open_pulls(
        github, STRICT, {f"{WEB}/a.yaml": configmap("a")}, {f"{WEB}/b.yaml": configmap("b")}
    )
    assert github.verdict(head21)[0] == github.verdict(head22)[0] == "action_required"
    github.comment("/approve", number=21)
    github.work()
    assert github.verdict(head21)[0] == "success"
    first, first_ref = github.queue((21,))
    second, second_ref = github.queue((22,), base=first)
    assert github.deliver_merge_group(first, first_ref, github.base_sha) == 202
    assert github.deliver_merge_group(second, second_ref, first) == 202
    github.work()
    ((one,), (two,)) = runs_on(github, first), runs_on(github, second)
    assert one["conclusion"] == "success"
    assert "✅ approved by @&#8203;maria" in one["output"]["summary"]
    assert two["conclusion"] == "failure"
    assert two["output"]["title"] == "1 new object in prod not approved on their pull requests"
    assert two["actions"] == []
    github.finish()
