"""The end-to-end fixtures: one bot (``ichor-bot serve`` on the shared Redis) per module, and
``forge``, one repository on each fake forge in turn (:mod:`tests.e2e.drivers`). A module or
test narrows the forges with ``@pytest.mark.parametrize("forge", [...], indirect=True)``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.drivers import FORGES, Forge, Gitea, GitHub, GitLab, open_forge
from tests.e2e.harness import Bot, running_bot


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running


@pytest.fixture(params=FORGES)
def forge(request: pytest.FixtureRequest, bot: Bot, tmp_path: Path) -> Iterator[Forge]:
    with open_forge(request.param, bot, tmp_path) as driver:
        yield driver


@pytest.fixture
def github(bot: Bot, tmp_path: Path) -> Iterator[GitHub]:
    with open_forge("github", bot, tmp_path) as driver:
        assert isinstance(driver, GitHub)
        yield driver


@pytest.fixture
def gitlab(bot: Bot, tmp_path: Path) -> Iterator[GitLab]:
    with open_forge("gitlab", bot, tmp_path) as driver:
        assert isinstance(driver, GitLab)
        yield driver


@pytest.fixture(params=["gitea", "forgejo"])
def gitea(request: pytest.FixtureRequest, bot: Bot, tmp_path: Path) -> Iterator[Gitea]:
    with open_forge(request.param, bot, tmp_path) as driver:
        assert isinstance(driver, Gitea)
        yield driver
