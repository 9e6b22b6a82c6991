"""The check end to end on every forge: a pull request's signed webhook → ``ichor-bot serve`` →
Redis → a real ``ichor-bot worker`` → the fake forge (every request validated against the
forge's recorded API description) and git over smart HTTP with the forge's token.

The verdict is a check run on GitHub and the ``ichor/acceptance`` commit status elsewhere; the
findings are line comments (review comments, or discussions on GitLab) and, on GitHub, check
run annotations. Every test ends with the driver's search for the token in all the bot wrote
or ran (:meth:`tests.e2e.drivers.Forge.finish`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx

from tests.e2e.drivers import Files, Forge, GitHub, GitLab
from tests.e2e.drivers.github import TOKEN_CALL
from tests.support.gitops import SECRET, THREE_PUSHES, configmap

EXTRA = {"clusters/prod/v1/configmaps/web/extra.yaml": configmap("extra")}
NOTES = "clusters/prod/notes.txt"
DB = "clusters/prod/v1/secrets/web/db.yaml"
REFUSED_TWO = "1 target refused · 2 new issues"
ONE_ON_BASE = "1 new issue, 1 already on base"
DISCUSSION = re.compile(r"/discussions/[0-9a-f]{40}")  # GitLab's discussion ids: random


def opened(forge: Forge, files: Files, base: Files | None = None) -> str:
    """A base (``base`` added), and pull request 7 of ``files`` on it, delivered; its head."""
    forge.base(base)
    head = forge.commit(files)
    forge.pull_request(head)
    return head


def titles(annotations: list[dict[str, object]]) -> list[str]:
    return sorted(str(a["title"]) for a in annotations)


def test_a_clean_pull_request_passes(forge: Forge) -> None:
    head = opened(forge, EXTRA)
    forge.work()
    assert forge.calls() == forge.api.check(head, summary="posted", new_worker=True)
    assert forge.states(head) == forge.checked(forge.PASSED)
    assert forge.verdict() == (forge.PASSED, "1 touched target accepted")
    assert forge.check_names(head) == {"ichor/acceptance"}
    assert forge.line_comments() == []
    assert forge.verdict_url(head) == forge.summary_url()  # the status links to the summary
    if isinstance(forge, GitHub):  # a check run: made in progress, naming its delivery
        run = forge.only_check_run()
        assert run["status"] == "completed" and forge.annotations() == []
        assert f"github-{run['external_id']}" == forge.bot.deliveries[-1]
        assert forge.fake.calls[1].json["status"] == "in_progress"


def test_a_foreign_file_and_a_plaintext_secret_fail_with_line_comments(forge: Forge) -> None:
    head = opened(forge, {NOTES: "todo\n", DB: SECRET})
    run = forge.work()
    assert forge.verdict() == (forge.FAILED, REFUSED_TWO)
    assert forge.states(head) == forge.checked(forge.FAILED)
    summary = forge.summary()
    assert "plaintext-secret" in summary and "foreign-file" in summary
    assert "staging" in summary  # not touched, named as such
    assert sorted(c.path for c in forge.line_comments()) == [NOTES, DB]
    assert run.git_argvs(), "the shim recorded no git process"  # searched for the token
    # The worker kept the check in Redis; the web process lists it and what the forge got.
    page = httpx.get(forge.bot.url + "/", timeout=10).text
    assert f">#{forge.number}</a>" in page and f">{head[:12]}</a>" in page
    assert REFUSED_TWO in page
    link = re.search(r'href="(/checks/[0-9a-f]{24})"', page)
    assert link is not None
    detail = httpx.get(forge.bot.url + link.group(1), timeout=10).text
    assert DB in detail and "plaintext-secret" in detail
    if isinstance(forge, GitHub):  # and annotations on the check run
        assert f'/pull/{forge.number}">#{forge.number}</a>' in page
        assert f'/commit/{head}">{head[:12]}</a>' in page
        annotations = forge.annotations()
        assert titles(annotations) == ["foreign-file", "plaintext-secret"]
        (secret,) = [a for a in annotations if a["title"] == "plaintext-secret"]
        assert (secret["path"], secret["annotation_level"]) == (DB, "failure")


def test_issues_already_on_base_are_marked_existing(forge: Forge) -> None:
    head = opened(
        forge, {"clusters/prod/new-notes.txt": "new\n"}, {"clusters/prod/old-notes.txt": "old\n"}
    )
    forge.work()
    assert forge.verdict() == (forge.FAILED, f"1 target refused · {ONE_ON_BASE}")
    assert forge.states(head) == forge.checked(forge.FAILED)
    summary = forge.summary()
    assert ONE_ON_BASE in summary and "old-notes.txt" in summary  # listed, not commented
    # Only the file the pull request changed is commented on.
    assert [c.path for c in forge.line_comments()] == ["clusters/prod/new-notes.txt"]
    if isinstance(forge, GitHub):
        assert [a["path"] for a in forge.annotations()] == ["clusters/prod/new-notes.txt"]


def test_a_pull_request_from_a_fork_is_fetched_from_the_base_repository(forge: Forge) -> None:
    base = forge.base()
    # The fork's commit exists on the forge only as the pull request's ref, never as a branch.
    forge.local.checkout("fork-feature", create_from=base)
    head = forge.commit({DB: SECRET})
    forge.local.checkout("feature")
    forge.local.git("branch", "-D", "fork-feature")
    forge.pull_request(head, fork=True)
    run = forge.work()
    assert forge.states(head) == forge.checked(forge.FAILED)
    assert [c.path for c in forge.line_comments()] == [DB]
    # Every git request went to the base repository on the forge.
    paths = forge.git_paths()
    assert paths and all(p.startswith(f"/{forge.full_name}.git/") for p in paths)
    assert not any("forks.invalid" in " ".join(argv) for argv in run.git_argvs())
    if isinstance(forge, GitHub):
        assert titles(forge.annotations()) == ["plaintext-secret"]


def test_many_issues_cap_the_line_comments(forge: Forge) -> None:
    head = opened(forge, {f"clusters/prod/junk-{n:03}.txt": "x\n" for n in range(120)})
    forge.work()
    assert forge.verdict() == (forge.FAILED, "1 target refused · 120 new issues")
    assert forge.states(head) == forge.checked(forge.FAILED)
    assert "120 new issues" in forge.summary()
    assert len(forge.line_comments()) == 30  # the rest only in the summary
    if isinstance(forge, GitHub):  # every issue annotated, at most fifty a request
        repo = f"/repos/{forge.full_name}"
        calls = forge.calls()
        assert calls[:2] == [TOKEN_CALL, f"POST {repo}/check-runs 201"]
        assert calls[2:5] == [f"PATCH {repo}/check-runs/1 200"] * 3
        sizes = [len(c.json["output"]["annotations"]) for c in forge.fake.calls[2:5]]
        assert sizes == [50, 50, 20]
        # Then line comments: one review carrying 30 of them.
        assert calls[5:] == [f"GET {repo}/pulls/7/comments 200", f"POST {repo}/pulls/7/reviews 200"]
        assert len(forge.fake.calls[6].json["comments"]) == 30
        assert len(forge.annotations()) == 120


def test_a_502_and_a_429_are_tried_again_and_the_check_ends(forge: Forge) -> None:
    forge.flaky()
    head = opened(forge, {NOTES: "todo\n"})
    run = forge.work()
    assert forge.verdict()[0] == forge.FAILED
    assert forge.states(head) == forge.checked(forge.FAILED)  # never a transition twice
    assert "foreign-file" in forge.summary()  # one summary
    assert "502" in run.log and "429" in run.log  # each retry is logged
    if isinstance(forge, GitHub):
        repo = f"/repos/{forge.full_name}"
        assert forge.calls() == [
            TOKEN_CALL,
            f"POST {repo}/check-runs 502",
            f"POST {repo}/check-runs 201",
            f"PATCH {repo}/check-runs/1 429",
            f"PATCH {repo}/check-runs/1 200",
            f"GET {repo}/pulls/7/comments 200",
            f"POST {repo}/pulls/7/reviews 200",
        ]


def test_only_the_newest_head_is_reported(forge: Forge) -> None:
    old = opened(forge, {NOTES: "todo\n"})
    new = forge.commit({NOTES: None})
    forge.pull_request(new)
    forge.work()  # both jobs run now; the first one is stale
    assert forge.states(old) == []
    assert forge.states(new) == forge.checked(forge.PASSED)


def test_three_pushes_leave_one_summary_and_no_duplicate_line_comments(forge: Forge) -> None:
    forge.worker_env["ICHOR_GITHUB_SUMMARY_COMMENT"] = "true"  # GitHub's is opt-in
    forge.base()
    calls: list[list[str]] = []
    heads: list[str] = []
    for files in THREE_PUSHES:
        heads.append(forge.commit(files))
        forge.reset_calls()
        forge.pull_request(heads[-1])
        forge.work()
        calls.append([DISCUSSION.sub("/discussions/<id>", c) for c in forge.calls()])
    assert "All clear" in forge.summary()
    comments = forge.line_comments()
    assert sorted(c.path for c in comments) == [
        "clusters/prod/more.txt",
        NOTES,
        DB,
    ]  # each finding commented on once across the three pushes
    finals = [forge.FAILED, forge.FAILED, forge.PASSED]
    assert [forge.states(head) for head in heads] == [forge.checked(f) for f in finals]
    if forge.kind == "forgejo":
        # Forgejo's API has no route to resolve a review comment: each worker process tries
        # once, gets Forgejo's 404, and leaves fixed comments to go outdated with their line.
        forge.tolerated = "/resolve:"
        assert not any(c.resolved for c in comments)
    else:
        assert all(c.resolved for c in comments)  # every finding fixed now
    assert calls == PUSH_CALLS[forge.kind](forge, heads)


def github_pushes(forge: Forge, heads: list[str]) -> list[list[str]]:
    repo = f"/repos/{forge.full_name}"

    def push(run: int, comment: str, lines: list[str]) -> list[str]:
        return [
            TOKEN_CALL,  # each push here is a new worker process
            f"POST {repo}/check-runs 201",
            f"GET {repo}/issues/7/comments 200",
            comment,
            f"PATCH {repo}/check-runs/{run} 200",
            f"GET {repo}/pulls/7/comments 200",
            *lines,
        ]

    return [
        push(1, f"POST {repo}/issues/7/comments 201", [f"POST {repo}/pulls/7/reviews 200"]),
        # notes.txt fixed (its comment marked so), more.txt new (one more review).
        push(
            2,
            f"PATCH {repo}/issues/comments/1 200",
            [f"POST {repo}/pulls/7/reviews 200", f"PATCH {repo}/pulls/comments/1 200"],
        ),
        push(
            3,
            f"PATCH {repo}/issues/comments/1 200",
            [f"PATCH {repo}/pulls/comments/{n} 200" for n in (2, 3)],
        ),
    ]


def gitlab_pushes(forge: Forge, heads: list[str]) -> list[list[str]]:
    assert isinstance(forge, GitLab)
    api = f"/api/v4/projects/{forge.project_id}"
    mr = f"{api}/merge_requests/7"

    def push(head: str, note: str, lines: list[str]) -> list[str]:
        return [
            f"POST {api}/statuses/{head} 201",  # running
            "GET /api/v4/user 200",
            f"GET {mr}/notes 200",
            note,
            f"POST {api}/statuses/{head} 201",  # the verdict, linking to the note
            f"GET {mr}/versions 200",
            f"GET {mr}/discussions 200",
            *lines,
        ]

    return [
        # Two findings: the summary note and one discussion each.
        push(heads[0], f"POST {mr}/notes 201", [f"POST {mr}/discussions 201"] * 2),
        # notes.txt fixed, more.txt new: the note edited, one new discussion, one resolved.
        push(
            heads[1],
            f"PUT {mr}/notes/1 200",
            [f"POST {mr}/discussions 201", f"PUT {mr}/discussions/<id> 200"],
        ),
        # All clear: the note edited, the two remaining discussions resolved.
        push(heads[2], f"PUT {mr}/notes/1 200", [f"PUT {mr}/discussions/<id> 200"] * 2),
    ]


def gitea_pushes(forge: Forge, heads: list[str]) -> list[list[str]]:
    api = f"/api/v1/repos/{forge.full_name}"
    gitea = forge.kind == "gitea"
    # Gitea resolves a fixed finding's comment; Forgejo has no such route and answers 404
    # (once per worker process: each push here is a new worker).
    resolved = "204" if gitea else "404"

    def push(head: str, comment: str, reviews: list[str], lines: list[str]) -> list[str]:
        return [
            f"POST {api}/statuses/{head} 201",  # pending
            "GET /api/v1/user 200",
            f"GET {api}/issues/7/comments 200",
            comment,
            f"POST {api}/statuses/{head} 201",  # the verdict, linking to the comment
            f"GET {api}/pulls/7/reviews 200",
            *[f"GET {api}/pulls/7/reviews/{n}/comments 200" for n in reviews],
            *lines,
        ]

    return [
        push(
            heads[0], f"POST {api}/issues/7/comments 201", [], [f"POST {api}/pulls/7/reviews 200"]
        ),
        push(
            heads[1],
            f"PATCH {api}/issues/comments/1 200",
            ["1"],
            [f"POST {api}/pulls/7/reviews 200", f"POST {api}/pulls/comments/2/resolve {resolved}"],
        ),
        push(
            heads[2],
            f"PATCH {api}/issues/comments/1 200",
            ["1", "2"],
            [f"POST {api}/pulls/comments/{n}/resolve 204" for n in (3, 4)]
            if gitea
            else [f"POST {api}/pulls/comments/2/resolve 404"],
        ),
    ]


# The calls of each of the three pushes, as each forge's API has them.
PUSH_CALLS: dict[str, Callable[[Forge, list[str]], list[list[str]]]] = {
    "github": github_pushes,
    "gitlab": gitlab_pushes,
    "gitea": gitea_pushes,
    "forgejo": gitea_pushes,
}
