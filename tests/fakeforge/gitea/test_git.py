"""The fake Gitea/Forgejo's git over HTTP on the API's origin: the token as Gitea's Basic
method takes it, for fetches and pushes alike, and the hook that moves a branch mid-push."""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeforge.gitea import FakeGitea

FULL = "octo/gitops"
GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_AUTHOR_NAME": "T",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "T",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


@pytest.fixture(params=["gitea", "forgejo"])
def fake(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FakeGitea]:
    with FakeGitea(tmp_path / "git", flavor=request.param) as fake:
        fake.add_repo(FULL)
        fake.add_pull(FULL, 7, head_sha="a" * 40, base_sha="b" * 40)
        yield fake
        assert fake.response_errors == [], fake.response_errors


def git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=False
    )


def basic(user: str, password: str) -> str:
    return "Authorization: Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_git_on_the_same_origin_takes_the_token_as_gitea_does(
    fake: FakeGitea, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    git("init", "-q", "-b", "main", str(work))
    (work / "a.txt").write_text("a\n")
    git("add", "a.txt", cwd=work)
    git("commit", "-q", "-m", "one", cwd=work)
    head = git("rev-parse", "HEAD", cwd=work).stdout.strip()
    bare = fake.make_bare_repo(FULL, source=work)
    git("--git-dir", str(bare), "update-ref", "refs/pull/7/head", head)
    url = fake.clone_url(FULL)
    assert url == f"{fake.url}/{FULL}.git" and fake.git_url == fake.url
    accepted = [
        fake.basic_auth_header(),
        basic(fake.token, ""),
        basic("anyone", fake.token),
    ]
    for i, header in enumerate(accepted):
        done = git("-c", f"http.extraHeader={header}", "clone", "-q", url, str(tmp_path / f"ok{i}"))
        assert done.returncode == 0, done.stderr
    fetched = git(
        "-c",
        f"http.extraHeader={accepted[0]}",
        "fetch",
        "-q",
        url,
        "refs/pull/7/head",
        cwd=tmp_path / "ok0",
    )
    assert fetched.returncode == 0, fetched.stderr
    refused: list[str | None] = [None, basic("x", "wrong"), f"Authorization: token {fake.token}"]
    for i, wrong in enumerate(refused):
        extra = ["-c", f"http.extraHeader={wrong}"] if wrong else []
        assert git(*extra, "clone", "-q", url, str(tmp_path / f"no{i}")).returncode != 0
    assert fake.calls == []


@pytest.fixture
def work(fake: FakeGitea, tmp_path: Path) -> Path:
    """A clone of the fake's repository (one commit on main), with a second commit."""
    seed = tmp_path / "seed"
    git("init", "-q", "-b", "main", str(seed))
    (seed / "a.txt").write_text("a\n")
    git("add", "a.txt", cwd=seed)
    git("commit", "-q", "-m", "one", cwd=seed)
    fake.make_bare_repo(FULL, source=seed)
    (seed / "a.txt").write_text("b\n")
    git("commit", "-q", "-am", "two", cwd=seed)
    return seed


def push(fake: FakeGitea, work: Path, header: str | None, *args: str) -> int:
    extra = ["-c", f"http.extraHeader={header}"] if header else []
    url = fake.clone_url(FULL)
    return git(*extra, "push", "-q", *args, url, "HEAD:refs/heads/ichor/x", cwd=work).returncode


def test_a_push_needs_the_token_before_git_receive_pack_runs(
    fake: FakeGitea, work: Path, tmp_path: Path
) -> None:
    bare = tmp_path / "git" / f"{FULL}.git"
    for wrong in (None, basic("x", "wrong"), f"Authorization: token {fake.token}"):
        assert push(fake, work, wrong) != 0
    assert git("--git-dir", str(bare), "rev-parse", "-q", "--verify", "ichor/x").returncode != 0
    refused = [r for r in fake.git.requests if "git-receive-pack" in r.path + r.query]
    assert refused and all((r.authorized, r.status) == (False, 401) for r in refused)
    assert fake.git.posts("git-receive-pack") == []  # git never got to send its pack
    assert push(fake, work, fake.basic_auth_header()) == 0
    assert len(fake.git.posts("git-receive-pack")) == 1


def test_before_push_runs_once_per_push_before_the_refs_are_updated(
    fake: FakeGitea, work: Path, tmp_path: Path
) -> None:
    bare = tmp_path / "git" / f"{FULL}.git"
    main = git("--git-dir", str(bare), "rev-parse", "main").stdout.strip()
    moved: list[str] = []

    def move() -> None:  # someone creates the branch after the pusher read the refs
        git("--git-dir", str(bare), "update-ref", "refs/heads/ichor/x", main)
        moved.append(main)

    fake.before_push(move, times=1)
    header = fake.basic_auth_header()
    assert push(fake, work, header, "--force-with-lease=refs/heads/ichor/x:") != 0
    assert moved == [main]
    assert git("--git-dir", str(bare), "rev-parse", "ichor/x").stdout.strip() == main
    assert push(fake, work, header, f"--force-with-lease=refs/heads/ichor/x:{main}") == 0
    assert moved == [main]  # spent
    assert len(fake.git.posts("git-receive-pack")) == 2
