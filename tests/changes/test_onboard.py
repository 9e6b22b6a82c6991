"""``open_onboarding``'s decisions before any git: an open proposal is the answer, a closed one
is a decline no trigger overrides, and a request proposes again."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import pytest

from bot.changes.engine import ChangeServices
from bot.changes.onboard import OnboardingOutcome, open_onboarding
from bot.changes.onboard_pulls import list_open
from bot.errors import PermanentForgeError
from bot.forges.base import PullRequestRef
from bot.git.commit import GitIdentity
from bot.git.store import Mirror
from bot.repos import ForgeKind, RepoRef
from bot.state.base import onboarding_key
from bot.state.memory import MemoryOnboarding, memory_state
from tests.support.recording_forge import RecordingForge

REPO = RepoRef(ForgeKind.GITHUB, "acme/gitops", default_branch="main", installation_id=1)
KEY = onboarding_key("github", "acme/gitops")


class Built(Exception):
    """Raised where the mirror would be opened: the job went on to fetch and build."""


LISTED = [
    PullRequestRef(9, "u9", head_ref="ichor/bootstrap"),  # a re-proposal's own: left out
    PullRequestRef(8, "u8", head_ref="x", body="<!-- ichor:onboarding -->\n..."),
    PullRequestRef(7, "u7", head_ref="feature", title="Bump"),
]


def FakeForge(open_pull: PullRequestRef | None) -> RecordingForge:
    """A forge whose open pull request on any branch is ``open_pull``, listing ``LISTED``;
    nothing of it is written to disk (no data dir is needed)."""
    answers = {
        "git_credentials": None,
        "find_pull_request": open_pull,
        "list_pull_requests": LISTED,
    }
    return RecordingForge(Path("/nonexistent-forge-data"), answers=answers)


def lookups(forge: RecordingForge) -> list[tuple[str, str]]:
    return [(head, base) for _, head, base in forge.calls_of("find_pull_request")]


def test_the_open_pull_requests_leave_out_the_onboarding_one() -> None:
    listed = list_open(FakeForge(None), REPO, "main")
    assert listed == [PullRequestRef(7, "u7", head_ref="feature", title="Bump")]


def test_a_listing_that_fails_is_said_not_raised() -> None:
    failing = FakeForge(None)
    failing.failures["list_pull_requests"] = PermanentForgeError(
        "GitHub GET /repos/acme/gitops/pulls: 403"
    )
    listed = list_open(failing, REPO, "main")
    assert listed == "GitHub GET /repos/acme/gitops/pulls: 403"


@contextmanager
def no_mirror(repo: RepoRef) -> Iterator[Mirror]:
    if repo.full_name:
        raise Built
    yield cast(Mirror, None)


def run(forge: RecordingForge, memory: MemoryOnboarding, **kwargs: Any) -> OnboardingOutcome:
    services = ChangeServices(forge, no_mirror, memory_state().locks, GitIdentity("bot", "b@x"))
    return open_onboarding(REPO, services, forge_kind="github", memory=memory, **kwargs)


def test_an_open_proposal_is_the_answer_and_is_remembered() -> None:
    memory = MemoryOnboarding()
    forge = FakeForge(PullRequestRef(3, "https://forge/pull/3"))
    outcome = run(forge, memory)
    assert outcome == OnboardingOutcome("pr-existing", "https://forge/pull/3")
    assert lookups(forge) == [("ichor/bootstrap", "main")] and memory.proposed(KEY)


def test_a_proposal_gone_from_the_open_ones_was_declined() -> None:
    memory = MemoryOnboarding()
    memory.remember_proposed(KEY)
    assert run(FakeForge(None), memory).result == "declined"
    assert memory.declined(KEY)
    forge = FakeForge(None)
    assert run(forge, memory).result == "declined"
    assert lookups(forge) == []  # a declined repository costs no forge call


def test_a_new_repository_goes_on_to_build() -> None:
    with pytest.raises(Built):
        run(FakeForge(None), MemoryOnboarding())


def test_a_request_forgets_the_decline_and_builds() -> None:
    memory = MemoryOnboarding()
    memory.remember_proposed(KEY)
    memory.remember_declined(KEY)
    with pytest.raises(Built):
        run(FakeForge(None), memory, requested=True)
    assert not memory.declined(KEY)
