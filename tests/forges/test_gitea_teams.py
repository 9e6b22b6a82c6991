"""GiteaForge.team_member against the fake Gitea and Forgejo over real HTTP: a team of a
target's ``approvers`` is ``org/team``, found by name, then one member read; a team that does
not exist or that the token may not read admits nobody (design.md 5.1)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.errors import PermanentForgeError, TransientForgeError
from bot.forges.base import TeamMembership
from bot.forges.gitea.adapter import GiteaForge
from bot.repos import ForgeKind, RepoRef
from tests.fakeforge.gitea import FakeGitea
from tests.forges.test_gitea import Driver, clean, repo, started

SEARCH = "/api/v1/orgs/octo/teams/search"


@pytest.fixture(params=["gitea", "forgejo"])
def fake(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FakeGitea]:
    with started(tmp_path, request.param) as fake:
        yield fake
        clean(fake)


def ask(fake: FakeGitea, team: str, login: str) -> bool:
    return Driver(fake)(lambda forge: forge.team_member(repo(fake), team, login))


def test_the_adapter_can_be_asked_about_teams() -> None:
    assert isinstance(GiteaForge(url="https://git.example.test", token="t0ken"), TeamMembership)


def test_a_member_is_in_the_team_found_by_its_name(fake: FakeGitea) -> None:
    fake.add_team("octo/platform-admins")  # found by the search too, not taken
    team = fake.add_team("octo/platform")
    fake.add_team_member("octo/platform", "maria")
    assert ask(fake, "octo/Platform", "maria") is True  # Gitea's team names ignore case
    assert fake.calls_summary() == [
        f"GET {SEARCH} 200",
        f"GET /api/v1/teams/{team}/members/maria 200",
    ]
    assert fake.calls[0].query == {
        "q": "Platform",
        "include_desc": "false",
        "limit": "50",
        "page": "1",
    }


def test_the_team_is_looked_for_page_by_page(fake: FakeGitea) -> None:
    for n in range(60):
        fake.add_team(f"octo/a-platform-{n:02}")
    fake.add_team_member("octo/platform", "maria")  # sorted after every a-platform-*
    assert ask(fake, "octo/platform", "maria") is True
    assert [c.query["page"] for c in fake.calls if c.path == SEARCH] == ["1", "2"]


def test_someone_not_in_the_team_is_not(fake: FakeGitea) -> None:
    fake.add_team_member("octo/platform", "maria")
    fake.add_team_member("octo/other", "alice")
    assert ask(fake, "octo/platform", "alice") is False
    assert ask(fake, "octo/platform", "nobody") is False  # no such user
    assert fake.calls_summary()[-1].endswith(" 404")


def test_no_such_team_or_organization_admits_nobody_and_asks_no_member(fake: FakeGitea) -> None:
    fake.add_team_member("octo/platform", "maria")
    assert ask(fake, "octo/nobody", "maria") is False
    assert ask(fake, "ghost/platform", "maria") is False
    assert ask(fake, "octo/platform/sub", "maria") is False  # a GitLab path: no request
    assert fake.calls_summary() == [
        f"GET {SEARCH} 200",
        "GET /api/v1/orgs/ghost/teams/search 404",
    ]


def test_a_blocked_account_is_not_in(fake: FakeGitea) -> None:
    fake.add_team_member("octo/platform", "carol", state="blocked")
    assert ask(fake, "octo/platform", "carol") is False


def test_a_team_the_token_may_not_read_admits_nobody_with_a_hint(
    fake: FakeGitea, caplog: pytest.LogCaptureFixture
) -> None:
    team = fake.add_team("octo/platform")
    fake.add_team_member("octo/platform", "maria")
    fake.inject("GET", rf"/api/v1/teams/{team}/members/.*", status=403, times=None)
    with caplog.at_level(logging.WARNING, "ichor.forge.gitea"):
        assert ask(fake, "octo/platform", "maria") is False
    assert "read:organization" in caplog.text and "own the organization" in caplog.text
    assert fake.token not in caplog.text


def test_a_failing_search_raises_after_the_retries(fake: FakeGitea) -> None:
    fake.add_team_member("octo/platform", "maria")
    fake.inject("GET", SEARCH, status=503, times=None)
    run = Driver(fake)
    with pytest.raises(TransientForgeError, match="Gitea GET /orgs/octo/teams/search: 503"):
        run(lambda forge: forge.team_member(repo(fake), "octo/platform", "maria"))
    assert run.slept


def test_a_repository_of_another_forge_is_refused(fake: FakeGitea) -> None:
    other = RepoRef(forge=ForgeKind.GITLAB, full_name="octo/gitops")
    with pytest.raises(PermanentForgeError, match="not Gitea"):
        Driver(fake)(lambda forge: forge.team_member(other, "octo/platform", "maria"))
