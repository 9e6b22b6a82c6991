"""GitHubForge's line comments and summary comment against the fake GitHub over real HTTP.

Every request is validated against GitHub's OpenAPI description by the fake; the tests assert
the exact calls each sync makes and the comments left on the pull request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import pytest

from bot.forges.base import LineCommentSync, LineFinding, marker_fingerprint
from bot.forges.github.adapter import GitHubForge
from bot.forges.github.reviews import FIXED_MARK, comment_body
from bot.repos import ForgeKind, RepoRef
from tests.fakeforge import FakeGitHub

T = TypeVar("T")
FULL = "octo/gitops"
REPO = RepoRef(
    forge=ForgeKind.GITHUB,
    full_name=FULL,
    clone_url="https://github.invalid/octo/gitops.git",
    installation_id=42,
)
BASE = "b" * 40
HEADS = ["1" * 40, "2" * 40, "3" * 40, "4" * 40]
TOKEN = "POST /app/installations/42/access_tokens 201"
LIST = f"GET /repos/{FULL}/pulls/7/comments 200"
REVIEW = f"POST /repos/{FULL}/pulls/7/reviews"
SINGLE = f"POST /repos/{FULL}/pulls/7/comments"


def edit(comment_id: int, status: int = 200) -> str:
    return f"PATCH /repos/{FULL}/pulls/comments/{comment_id} {status}"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:  # the API alone: no git server needed
        fake.add_repo(FULL, installation_id=42)
        fake.add_pull(FULL, number=7, head_sha=HEADS[0], base_sha=BASE)
        yield fake
        assert fake.response_errors == [], fake.response_errors


def finding(n: int, path: str = "clusters/prod/x.yaml", line: int | None = None) -> LineFinding:
    return LineFinding(f"f{n:03d}", path, n if line is None else line, f"finding {n}")


def run(fake: FakeGitHub, make: Callable[[GitHubForge], T]) -> T:
    """``make(forge)`` with a fresh forge (and so a fresh token), closed after."""

    def nap(seconds: float) -> None:
        pass

    def go() -> T:
        forge = GitHubForge(
            app_id=fake.app_id,
            private_key_pem=fake.private_key_pem,
            api_url=fake.url,
            web_url=fake.web_url,
            sleep=nap,
        )
        try:
            return make(forge)
        finally:
            forge.close()

    return go()


def sync(
    fake: FakeGitHub, findings: Sequence[LineFinding], *, head: str = HEADS[0], limit: int = 30
) -> tuple[LineCommentSync, list[str]]:
    """One sync; its result and the calls it made."""
    fake.reset_calls()
    result = run(
        fake,
        lambda f: f.sync_line_comments(
            REPO, 7, head_sha=head, base_sha=BASE, findings=findings, limit=limit
        ),
    )
    return result, fake.calls_summary()


def mine(fake: FakeGitHub) -> dict[str, dict[str, Any]]:
    """The bot's line comments on PR 7 by fingerprint (each fingerprint at most once)."""
    out: dict[str, dict[str, Any]] = {}
    for comment in fake.review_comments(FULL, 7):
        if comment["user"]["login"] == fake.bot_login:
            key = marker_fingerprint(comment["body"])
            assert key is not None and key not in out, comment["body"]
            out[key] = comment
    return out


def fixed(comment: dict[str, Any]) -> bool:
    return bool(comment["body"].startswith(FIXED_MARK))


def test_three_pushes_post_mark_fixed_and_unmark(fake: FakeGitHub) -> None:
    a, b, c, d = finding(1), finding(2), finding(3), finding(4, path="clusters/prod/y.yaml")

    result, calls = sync(fake, [a, b, c])
    assert result == LineCommentSync(posted=3)
    assert calls == [TOKEN, LIST, f"{REVIEW} 200"]
    review = fake.calls[-1].json
    assert review == {
        "commit_id": HEADS[0],
        "event": "COMMENT",
        "body": "**ichor/acceptance**: 3 new findings on changed lines.",
        "comments": [
            {"path": f.path, "line": f.line, "side": "RIGHT", "body": comment_body(f)}
            for f in (a, b, c)
        ],
    }
    assert comment_body(a) == "finding 1\n\n<!-- ichor:finding f001 -->"
    ids = {key: comment["id"] for key, comment in mine(fake).items()}
    assert list(ids) == ["f001", "f002", "f003"]
    assert len(fake.reviews(FULL, 7)) == 1  # one notification for three comments

    # People's comments are never touched, whatever marker they quote.
    quoting = fake.add_review_comment(
        FULL, 7, "> finding 1 <!-- ichor:finding f001 -->\nwhy?", path=a.path, line=1
    )
    stray = fake.add_review_comment(FULL, 7, "<!-- ichor:finding f999 -->", path=a.path, line=2)

    # Push 2: a is fixed, d is new.
    fake.update_pull(FULL, 7, head_sha=HEADS[1])
    result, calls = sync(fake, [b, c, d], head=HEADS[1])
    assert result == LineCommentSync(posted=1, resolved=1, unchanged=2)
    assert calls == [TOKEN, LIST, f"{REVIEW} 200", edit(ids["f001"])]
    assert fake.calls[2].json["comments"][0]["path"] == "clusters/prod/y.yaml"
    now = mine(fake)
    assert now["f001"]["body"] == (
        f"{FIXED_MARK}\n✅ Fixed in {HEADS[1][:7]}\n\nfinding 1\n\n<!-- ichor:finding f001 -->"
    )
    assert [key for key, comment in now.items() if fixed(comment)] == ["f001"]

    # Push 3: a comes back (un-marked, not posted again), b is fixed.
    fake.update_pull(FULL, 7, head_sha=HEADS[2])
    result, calls = sync(fake, [a, c, d], head=HEADS[2])
    assert result == LineCommentSync(resolved=1, unchanged=3)
    assert calls == [TOKEN, LIST, edit(ids["f001"]), edit(ids["f002"])]
    now = mine(fake)
    assert now["f001"]["body"] == comment_body(a)
    assert [key for key, comment in now.items() if fixed(comment)] == ["f002"]

    # Nothing changed: one listing, no write; a fixed comment is not marked twice.
    result, calls = sync(fake, [a, c, d], head=HEADS[3])
    assert result == LineCommentSync(unchanged=3)
    assert calls == [TOKEN, LIST]

    people = {
        c["id"]: c["body"] for c in fake.review_comments(FULL, 7) if c["user"]["type"] == "User"
    }
    assert people == {quoting["id"]: quoting["body"], stray["id"]: stray["body"]}
    assert sorted(mine(fake)) == ["f001", "f002", "f003", "f004"]  # no duplicates
    fake.assert_clean()


def test_the_limit_holds_new_findings_back_for_the_next_sync(fake: FakeGitHub) -> None:
    many = [finding(n) for n in range(1, 41)]
    result, calls = sync(fake, many, limit=30)
    assert result == LineCommentSync(posted=30, over_limit=10)
    assert calls == [TOKEN, LIST, f"{REVIEW} 200"]
    review = fake.calls[-1].json
    assert len(review["comments"]) == 30
    assert review["body"].endswith(
        "30 new findings on changed lines. 10 more are listed in the check run."
    )
    assert sorted(mine(fake)) == [f"f{n:03d}" for n in range(1, 31)]

    result, calls = sync(fake, many, limit=30)
    assert result == LineCommentSync(posted=10, unchanged=30)
    assert calls == [TOKEN, LIST, f"{REVIEW} 200"]
    assert sorted(mine(fake)) == [f"f{n:03d}" for n in range(1, 41)]
    assert len(fake.reviews(FULL, 7)) == 2

    result, calls = sync(fake, many, limit=30)
    assert (result, calls) == (LineCommentSync(unchanged=40), [TOKEN, LIST])
    fake.assert_clean()


def test_a_limit_of_zero_posts_nothing_and_duplicates_count_once(fake: FakeGitHub) -> None:
    result, calls = sync(fake, [finding(1), finding(1), finding(2)], limit=0)
    assert (result, calls) == (LineCommentSync(over_limit=2), [TOKEN, LIST])
    result, _ = sync(fake, [finding(1), finding(1), finding(2)])
    assert result == LineCommentSync(posted=2)
    assert sorted(mine(fake)) == ["f001", "f002"]


def test_every_page_of_comments_is_read(fake: FakeGitHub) -> None:
    many = [finding(n) for n in range(1, 106)]
    assert sync(fake, many, limit=200)[0] == LineCommentSync(posted=105)
    result, calls = sync(fake, many, limit=200)
    assert (result, calls) == (LineCommentSync(unchanged=105), [TOKEN, LIST, LIST])


def test_a_refused_review_falls_back_to_single_comments(
    fake: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    fake.set_diff_lines(FULL, 7, {"x.yaml": {1, 2}})
    findings = [
        finding(1, "x.yaml", 1),
        finding(2, "x.yaml", 5),  # not a line of the diff
        finding(3, "y.yaml", 1),  # not a file of the diff
        finding(4, "x.yaml", 2),
    ]
    with caplog.at_level(logging.INFO, logger="ichor.forge.github"):
        result, calls = sync(fake, findings)
    assert result == LineCommentSync(posted=2)
    assert calls == [
        TOKEN,
        LIST,
        f"{REVIEW} 422",
        f"{SINGLE} 201",
        f"{SINGLE} 422",
        f"{SINGLE} 422",
        f"{SINGLE} 201",
    ]
    assert fake.calls[3].json == {
        "path": "x.yaml",
        "line": 1,
        "side": "RIGHT",
        "body": comment_body(findings[0]),
        "commit_id": HEADS[0],
    }
    assert sorted(mine(fake)) == ["f001", "f004"]
    skipped = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(skipped) == 2
    assert "x.yaml:5" in skipped[0] and "y.yaml:1" in skipped[1]
    assert all("422" in message for message in skipped)

    # The refused ones are tried again next time (the diff may have grown); nothing doubles.
    result, calls = sync(fake, findings)
    assert result == LineCommentSync(unchanged=2)
    assert calls == [TOKEN, LIST, f"{REVIEW} 422", f"{SINGLE} 422", f"{SINGLE} 422"]
    assert sorted(mine(fake)) == ["f001", "f004"]
    fake.assert_clean()


def test_a_failure_mid_sync_is_retried_without_posting_twice(fake: FakeGitHub) -> None:
    sync(fake, [finding(1)])
    [first] = mine(fake).values()
    fake.inject(method="PATCH", path=r"/repos/.*/pulls/comments/\d+", status=502, times=1)
    result, calls = sync(fake, [finding(2)], head=HEADS[1])
    assert calls == [
        TOKEN,
        LIST,
        f"{REVIEW} 200",
        edit(first["id"], 502),
        LIST,  # the whole sync again: finding 2 is there now, so only the edit is left
        edit(first["id"]),
    ]
    assert result == LineCommentSync(resolved=1, unchanged=1)  # the attempt that finished
    assert sorted(mine(fake)) == ["f001", "f002"]
    assert fixed(mine(fake)["f001"])


def test_upsert_summary_comment_returns_the_comment_url(fake: FakeGitHub) -> None:
    def upsert(body: str) -> tuple[str | None, list[str]]:
        fake.reset_calls()
        url = run(fake, lambda f: f.upsert_summary_comment(REPO, 7, body))
        return url, fake.calls_summary()

    comments = f"/repos/{FULL}/issues/7/comments"
    url, calls = upsert("first")
    [comment] = fake.comments(FULL, 7)
    assert url is not None and url == comment["html_url"]
    assert url.endswith(f"/{FULL}/pull/7#issuecomment-1")
    assert calls == [TOKEN, f"GET {comments} 200", f"POST {comments} 201"]
    assert upsert("second") == (
        url,
        [TOKEN, f"GET {comments} 200", f"PATCH /repos/{FULL}/issues/comments/1 200"],
    )
    assert upsert("second") == (url, [TOKEN, f"GET {comments} 200"])  # unchanged: not re-sent
    assert [c["body"] for c in fake.comments(FULL, 7)] == ["<!-- ichor:summary -->\nsecond"]
    fake.assert_clean()
