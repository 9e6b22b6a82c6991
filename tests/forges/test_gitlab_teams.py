"""GitLabForge.team_member against the fake GitLab over real HTTP: a team of a target's
``approvers`` is a group path, and only an active member with at least Guest access is in it,
an inherited membership included (design.md 5.1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.errors import TransientForgeError
from bot.forges.base import TeamMembership
from bot.forges.gitlab.adapter import GitLabForge
from bot.repos import ForgeKind, RepoRef
from tests.fakeforge.gitlab import FakeGitLab

PROJECT = "acme/gitops"
REPO = RepoRef(forge=ForgeKind.GITLAB, full_name=PROJECT, clone_url="unused", id="1")
TEAM = "acme/platform"
GROUP = "/api/v4/groups/acme%2Fplatform/members/all"


@pytest.fixture
def fake() -> Iterator[FakeGitLab]:
    with FakeGitLab() as fake:
        fake.add_project(PROJECT, project_id=1)
        yield fake
        assert fake.validation_errors == [], fake.validation_errors
        assert fake.auth_failures == [], fake.auth_failures


@pytest.fixture
def forge(fake: FakeGitLab) -> Iterator[GitLabForge]:
    forge = GitLabForge(url=fake.url, token=fake.token, sleep=lambda _: None, timeout=5)
    yield forge
    forge.close()


def test_the_adapter_can_be_asked_about_teams(forge: GitLabForge) -> None:
    assert isinstance(forge, TeamMembership)


def test_an_active_member_is_in_and_asked_by_user_id(fake: FakeGitLab, forge: GitLabForge) -> None:
    maria = fake.add_team_member(TEAM, "maria")
    assert forge.team_member(REPO, TEAM, "maria") is True
    assert fake.calls_summary() == [
        "GET /api/v4/users 200",
        f"GET {GROUP}/{maria} 200",
    ]


def test_a_member_of_a_parent_group_is_in_a_subgroup(fake: FakeGitLab, forge: GitLabForge) -> None:
    fake.add_group(TEAM)
    fake.add_team_member("acme", "maria", access_level=50)
    assert forge.team_member(REPO, TEAM, "maria") is True
    assert forge.team_member(REPO, "ACME/Platform", "maria") is True  # GitLab ignores case


def test_someone_not_in_the_group_is_not(fake: FakeGitLab, forge: GitLabForge) -> None:
    fake.add_team_member(TEAM, "maria")
    fake.add_team_member("acme/other", "alice")
    assert forge.team_member(REPO, TEAM, "alice") is False
    assert fake.calls_summary()[-1].endswith(" 404")


def test_no_such_group_admits_nobody(fake: FakeGitLab, forge: GitLabForge) -> None:
    fake.add_team_member(TEAM, "maria")
    assert forge.team_member(REPO, "acme/nobody", "maria") is False
    assert forge.team_member(REPO, "/acme/platform", "maria") is False  # not a path: no request
    assert fake.calls_summary()[-1] == "GET /api/v4/groups/acme%2Fnobody/members/all/2 404"


def test_no_such_account_asks_no_group(fake: FakeGitLab, forge: GitLabForge) -> None:
    fake.add_team_member(TEAM, "maria")
    assert forge.team_member(REPO, TEAM, "Maria") is False  # the exact username only
    assert forge.team_member(REPO, TEAM, "") is False
    assert fake.calls_summary() == ["GET /api/v4/users 200"]


@pytest.mark.parametrize(
    ("state", "level"),
    [("awaiting", 30), ("blocked", 30), ("active", 5)],
    ids=["invited-or-awaiting-a-seat", "blocked-account", "minimal-access"],
)
def test_a_membership_not_active_or_below_guest_is_not_in(
    fake: FakeGitLab, forge: GitLabForge, state: str, level: int
) -> None:
    fake.add_team_member(TEAM, "carol", state=state, access_level=level)
    assert forge.team_member(REPO, TEAM, "carol") is False


def test_a_guest_is_in(fake: FakeGitLab, forge: GitLabForge) -> None:
    fake.add_team_member(TEAM, "gus", access_level=10)
    assert forge.team_member(REPO, TEAM, "gus") is True


def test_a_failing_lookup_raises_after_the_retries(fake: FakeGitLab, forge: GitLabForge) -> None:
    maria = fake.add_team_member(TEAM, "maria")
    fake.inject("GET", rf"{GROUP}/{maria}", status=503, times=None)
    with pytest.raises(TransientForgeError, match=f"GitLab GET {GROUP}/{maria}: 503"):
        forge.team_member(REPO, TEAM, "maria")
