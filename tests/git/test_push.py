"""One push with a lease, against a real ``git http-backend`` that wants the token for pushes
too: created and replaced branches, a stale lease, refused tokens, secrets kept off argv and
disk."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest

from bot.errors import GitStoreError, PermanentForgeError, TransientForgeError
from bot.forges.base import GitCredentials
from bot.git.commit import GitIdentity, build_commit
from bot.git.push import PushRaceError, push_branch, remote_branch_head
from bot.git.store import Mirror
from tests.git.conftest import BASIC, HEADER, TOKEN, Served, git

BOT = GitIdentity("ichor-bot", "bot@ichor.example")
BRANCH = "ichor/approve-apps-web"


@contextmanager
def fetched(served: Served) -> Iterator[Mirror]:
    with served.store.open(served.handle) as mirror:
        mirror.fetch(served.creds, ["refs/heads/main"], want=[served.main])
        yield mirror


def change(mirror: Mirror, parent: str, data: bytes = b"a: 2\n") -> str:
    return build_commit(
        mirror,
        parent=parent,
        changes={"t/a.yaml": data, "t/new.yaml": b"n: 1\n", "t/b.yaml": None},
        message="ichor: approve Deployment apps/web",
        author=BOT,
        co_author="Ada <ada@example.com>",
        date=datetime(2024, 5, 6, tzinfo=UTC),
    )


def missing(mirror: Mirror, rev: str) -> set[str]:
    out = git(mirror.path, "rev-list", "--objects", "--missing=print", "--no-object-names", rev)
    return {line[1:] for line in out.split() if line.startswith("?")}


def wrong_credentials(served: Served) -> tuple[GitCredentials, str, str]:
    token = "ghs_wrongwrongwrongwrong42"
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return GitCredentials(served.creds.host, f"Authorization: Basic {basic}"), token, basic


def test_a_push_creates_the_branch_and_the_forge_has_every_object(served: Served) -> None:
    with fetched(served) as mirror:
        assert remote_branch_head(mirror, served.creds, BRANCH) is None
        new = change(mirror, served.main)
        before = missing(mirror, served.main)
        push_branch(mirror, served.creds, commit=new, branch=BRANCH, expected=None)
        assert missing(mirror, served.main) == before  # no blob fetched to build the pack
        assert remote_branch_head(mirror, served.creds, BRANCH) == new
    assert served.remote_head(BRANCH) == new
    assert served.remote_head("main") == served.main
    git(served.bare, "fsck", "--strict", "--no-dangling")
    assert git(served.bare, "cat-file", "blob", f"{new}:t/new.yaml") == "n: 1"
    pushes = served.server.posts("git-receive-pack")
    assert len(pushes) == 1 and all(r.authorized for r in pushes)


def test_a_leftover_branch_is_replaced_with_the_lease_just_read(served: Served) -> None:
    leftover = served.remote_commit({"t/a.yaml": b"old attempt\n"}, branch=BRANCH)
    with fetched(served) as mirror:
        expected = remote_branch_head(mirror, served.creds, BRANCH)
        assert expected == leftover
        new = change(mirror, served.main)
        push_branch(mirror, served.creds, commit=new, branch=BRANCH, expected=expected)
    assert served.remote_head(BRANCH) == new  # not a fast-forward: the lease allowed it


def test_a_stale_lease_raises_and_leaves_the_branch_alone(served: Served) -> None:
    served.remote_commit({"t/a.yaml": b"old attempt\n"}, branch=BRANCH)
    with fetched(served) as mirror:
        expected = remote_branch_head(mirror, served.creds, BRANCH)
        assert expected is not None
        new = change(mirror, served.main)
        moved = served.remote_commit({"t/a.yaml": b"someone else\n"}, branch=BRANCH)
        with pytest.raises(PushRaceError, match=BRANCH) as info:
            push_branch(mirror, served.creds, commit=new, branch=BRANCH, expected=expected)
        assert isinstance(info.value, GitStoreError)
        assert served.remote_head(BRANCH) == moved
        # "Must not exist" is a lease too: the branch appeared, so nothing is pushed.
        with pytest.raises(PushRaceError):
            push_branch(mirror, served.creds, commit=new, branch=BRANCH, expected=None)
        assert served.remote_head(BRANCH) == moved


def test_a_base_that_moved_after_the_fetch_still_needs_no_blob(served: Served) -> None:
    with fetched(served) as mirror:
        new = change(mirror, served.main)
        # main moves on the forge: its new tip is unknown here, the parent is not.
        served.remote_commit({"other/x.txt": b"x moved\n"})
        before = missing(mirror, served.main)
        push_branch(mirror, served.creds, commit=new, branch=BRANCH, expected=None)
        assert missing(mirror, served.main) == before
    assert served.remote_head(BRANCH) == new
    git(served.bare, "fsck", "--strict", "--no-dangling")


def test_a_wrong_or_missing_token_is_permanent_and_never_echoed(served: Served) -> None:
    creds, token, basic = wrong_credentials(served)
    with fetched(served) as mirror:
        new = change(mirror, served.main)
        requests = len(served.server.requests)
        with pytest.raises(PermanentForgeError) as info:
            push_branch(mirror, creds, commit=new, branch=BRANCH, expected=None)
        with pytest.raises(PermanentForgeError):
            push_branch(mirror, None, commit=new, branch=BRANCH, expected=None)
        with pytest.raises(PermanentForgeError) as listed:
            remote_branch_head(mirror, creds, BRANCH)
    for text in (str(info.value), str(listed.value)):
        assert token not in text and basic not in text and TOKEN not in text
    assert served.remote_head(BRANCH) is None
    refused = served.server.requests[requests:]
    assert refused and all(r.status == 401 and not r.authorized for r in refused)
    assert any(r.query == "service=git-receive-pack" for r in refused)  # pushes need it too


def test_a_server_error_is_transient(served: Served) -> None:
    with fetched(served) as mirror:
        new = change(mirror, served.main)
        served.server.fail_next = 1
        with pytest.raises(TransientForgeError, match="500"):
            push_branch(mirror, served.creds, commit=new, branch=BRANCH, expected=None)
        served.server.fail_next = 1
        with pytest.raises(TransientForgeError, match="500"):
            remote_branch_head(mirror, served.creds, BRANCH)
        push_branch(mirror, served.creds, commit=new, branch=BRANCH, expected=None)
    assert served.remote_head(BRANCH) == new


def test_the_token_stays_off_argv_and_disk(served: Served) -> None:
    served.remote_commit({"t/a.yaml": b"old attempt\n"}, branch=BRANCH)
    with fetched(served) as mirror:
        expected = remote_branch_head(mirror, served.creds, BRANCH)
        new = change(mirror, served.main)
        push_branch(mirror, served.creds, commit=new, branch=BRANCH, expected=expected)
    argvs = served.git_argvs()
    assert any("push" in a for a in argvs) and any("ls-remote" in a for a in argvs)
    for argv in argvs:
        joined = "\0".join(argv)
        assert TOKEN not in joined and BASIC not in joined and HEADER not in joined, argv
        assert not any("@" in a and "://" in a for a in argv), argv  # no URL credentials
    for path in served.root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert TOKEN.encode() not in data and BASIC.encode() not in data, path
    config = git(served.root / "mirrors" / "github" / "o%2Fr.git", "config", "--list")
    assert "extraheader" not in config.lower() and "pushurl" not in config


def test_bad_names_and_ids_are_refused_before_git_runs(served: Served) -> None:
    with fetched(served) as mirror:
        new = change(mirror, served.main)
        requests = len(served.server.requests)
        for branch in ("", "-f", "a..b", "a b", "refs/heads/x", "x.lock", "a:b", "x/"):
            with pytest.raises(GitStoreError, match="branch"):
                push_branch(mirror, served.creds, commit=new, branch=branch, expected=None)
        with pytest.raises(GitStoreError, match="full object id"):
            push_branch(mirror, served.creds, commit="HEAD", branch=BRANCH, expected=None)
        with pytest.raises(GitStoreError, match="full object id"):
            push_branch(mirror, served.creds, commit=new, branch=BRANCH, expected="main")
        with pytest.raises(GitStoreError, match="not in the mirror"):
            push_branch(mirror, served.creds, commit="4" * 40, branch=BRANCH, expected=None)
        assert len(served.server.requests) == requests


def hook(served: Served, script: str) -> None:
    path = served.bare / "hooks" / "pre-receive"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def test_a_branch_moved_on_the_server_during_the_push_is_a_race(served: Served) -> None:
    with fetched(served) as mirror:
        new = change(mirror, served.main)
        # The lease passes where git compares it (the advertised refs), then the branch appears
        # before the server updates it: the server's own old-value check refuses the update.
        hook(
            served, f"unset GIT_QUARANTINE_PATH\ngit update-ref refs/heads/{BRANCH} {served.main}\n"
        )
        with pytest.raises(PushRaceError, match=r"failed to update ref|cannot lock ref"):
            push_branch(mirror, served.creds, commit=new, branch=BRANCH, expected=None)
    assert served.remote_head(BRANCH) == served.main


def test_a_branch_the_server_refuses_is_permanent(served: Served) -> None:
    with fetched(served) as mirror:
        new = change(mirror, served.main)
        hook(served, "echo 'protected branch' >&2\nexit 1\n")
        with pytest.raises(PermanentForgeError, match="hook declined") as info:
            push_branch(mirror, served.creds, commit=new, branch=BRANCH, expected=None)
        assert not isinstance(info.value, PushRaceError)
    assert served.remote_head(BRANCH) is None
