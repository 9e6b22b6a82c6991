"""One driver per forge for the end-to-end tests (:class:`.forge.Forge` says what each does),
so one test serves every forge: ``open_forge`` starts the fake forge of a kind and yields its
driver, whose checks run when the test ends."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from tests.e2e.drivers.forge import AUTHOR, MAINTAINER, READER, Files, Forge, LineComment, Pull
from tests.e2e.drivers.gitea import Gitea
from tests.e2e.drivers.github import GitHub
from tests.e2e.drivers.gitlab import GitLab
from tests.e2e.harness import Bot
from tests.fakeforge import FakeGitHub
from tests.fakeforge.gitea import FakeGitea
from tests.fakeforge.gitlab import FakeGitLab

FORGES = ["github", "gitlab", "gitea", "forgejo"]

__all__ = [
    "AUTHOR",
    "FORGES",
    "MAINTAINER",
    "READER",
    "Files",
    "Forge",
    "GitHub",
    "GitLab",
    "Gitea",
    "LineComment",
    "Pull",
    "open_forge",
]


@contextlib.contextmanager
def open_forge(kind: str, bot: Bot, tmp_path: Path, *, finish: bool = True) -> Iterator[Forge]:
    """The fake forge of ``kind`` (its git under ``tmp_path``) and a repository on it; when
    the test is done, the driver's :meth:`Forge.finish` (unless ``finish`` is off)."""
    driver: Forge
    git_root = tmp_path / "forge-git"
    with contextlib.ExitStack() as stack:
        if kind == "github":
            driver = GitHub(stack.enter_context(FakeGitHub(git_root)), bot, tmp_path)
        elif kind == "gitlab":
            driver = GitLab(stack.enter_context(FakeGitLab(git_root)), bot, tmp_path)
        else:
            flavor: Literal["gitea", "forgejo"] = "forgejo" if kind == "forgejo" else "gitea"
            fake = stack.enter_context(FakeGitea(git_root, flavor=flavor))
            driver = Gitea(fake, bot, tmp_path)
        yield driver
        if finish:
            driver.finish()
