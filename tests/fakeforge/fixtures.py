"""pytest fixtures for the fake GitHub. Use them from a test module or a conftest with
``from tests.fakeforge.fixtures import fake_github  # noqa: F401``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeforge.github import FakeGitHub


@pytest.fixture
def fake_github(tmp_path: Path) -> Iterator[FakeGitHub]:
    """A started fake (API + git over HTTP, bare repositories under ``tmp_path/forge-git``).

    At teardown it fails the test if the fake itself answered anything that departs from the
    description (``response_errors``: a bug in the fake, never in the code under test).
    """
    with FakeGitHub(tmp_path / "forge-git") as fake:
        yield fake
        assert fake.response_errors == [], fake.response_errors
