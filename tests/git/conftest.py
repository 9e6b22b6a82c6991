"""A repository served by a real ``git http-backend`` that wants the token for every request
(fetch and push), a store of blob-less mirrors, and a shim recording every git argv."""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.forges.base import GitCredentials
from bot.git.repository import git_environment
from bot.git.store import GitStore
from bot.repos import ForgeKind, RepoRef
from tests.support.git_http import GitHttpServer
from tests.support.git_shim import install_git_shim, recorded_argvs

TOKEN = "ghs_pushT0kenValue0987654321fedcba"
BASIC = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
HEADER = f"Authorization: Basic {BASIC}"
FILES = {
    "t/a.yaml": b"a: 1\n",
    "t/b.yaml": b"b: 2\n",
    "t/deep/c.yaml": b"c: 3\n",
    "t/run.sh": b"#!/bin/sh\necho hi\n",
    "other/x.txt": b"x\n",
    "top.txt": b"top\n",
}
SYMLINK = ("t/link.yaml", "a.yaml")
GITLINK = ("t/vendor", "2" * 40)


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    env = {**git_environment(), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    env.update({"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"})
    env.update({"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], input=input, capture_output=True, env=env, check=True
    )
    return proc.stdout.decode().strip()


@dataclass
class Served:
    server: GitHttpServer
    store: GitStore
    bare: Path  # the served repository, as the forge holds it
    work: Path  # a clone with a work tree, for moving branches "on the forge"
    main: str
    handle: RepoRef
    creds: GitCredentials
    root: Path  # the store's data dir
    argv_log: Path

    def git_argvs(self) -> list[list[str]]:
        return [a for a in recorded_argvs(self.argv_log) if "http-backend" not in a]

    def remote_head(self, branch: str) -> str | None:
        out = git(self.bare, "for-each-ref", "--format=%(objectname)", f"refs/heads/{branch}")
        return out or None

    def remote_commit(self, files: dict[str, bytes], *, branch: str = "main") -> str:
        """A commit made on the forge (outside the bot) on ``branch``; its id."""
        git(self.work, "checkout", "--quiet", "-B", branch, self.main)
        for path, data in files.items():
            target = self.work / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        git(self.work, "add", "--all")
        git(self.work, "commit", "--quiet", "-m", f"on {branch}")
        git(self.work, "push", "--quiet", "--force", str(self.bare), f"HEAD:refs/heads/{branch}")
        return git(self.work, "rev-parse", "HEAD")


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "--quiet", "--initial-branch=main")
    for path, data in FILES.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_bytes(data)
    os.symlink(SYMLINK[1], work / SYMLINK[0])
    git(work, "add", "--all")
    git(work, "update-index", "--chmod=+x", "t/run.sh")
    git(work, "update-index", "--add", "--cacheinfo", f"160000,{GITLINK[1]},{GITLINK[0]}")
    git(work, "commit", "--quiet", "-m", "base")
    main = git(work, "rev-parse", "HEAD")
    bare = tmp_path / "served" / "o" / "r.git"
    bare.parent.mkdir(parents=True)
    git(tmp_path, "clone", "--quiet", "--bare", str(work), str(bare))

    argv_log = tmp_path / "git-argv.log"
    shim = install_git_shim(tmp_path / "shim", argv_log)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ.get('PATH', '')}")
    with GitHttpServer(bare.parent.parent, lambda value: value == f"Basic {BASIC}") as server:
        root = tmp_path / "data"
        yield Served(
            server=server,
            store=GitStore(root, allowed_base_url=server.url, timeout=30),
            bare=bare,
            work=work,
            main=main,
            handle=RepoRef(ForgeKind.GITHUB, "o/r", clone_url=server.clone_url("o/r")),
            creds=GitCredentials(server.url.removeprefix("http://"), HEADER),
            root=root,
            argv_log=argv_log,
        )
