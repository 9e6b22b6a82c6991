"""Every onboarding outcome leaves an audit record, so the status page says why a repository
got no proposal (issue 16: "the log and the status page say why")."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.changes.onboard import OnboardingOutcome
from bot.settings import Settings
from bot.state.memory import memory_state
from workers.context import build_context
from workers.onboarding import audit_onboarding, audited


@pytest.mark.parametrize(
    ("outcome", "result"),
    [
        (OnboardingOutcome("pr-opened", "https://x/pull/1"), "pr-opened"),
        (OnboardingOutcome("pr-existing", "https://x/pull/1"), "pr-existing"),
        (
            OnboardingOutcome("no-candidates", reason="no folder has 3 Kubernetes objects"),
            "refused: no folder looks like a GitTarget path (no folder has 3 Kubernetes objects)",
        ),
        (OnboardingOutcome("configured"), "refused: it already has .ichor.yaml"),
        (
            OnboardingOutcome("declined"),
            "refused: its onboarding pull request was closed; `ichor-bot onboard` proposes again",
        ),
    ],
)
def test_outcomes_are_named_as_the_audit_names_results(
    outcome: OnboardingOutcome, result: str
) -> None:
    assert audited(outcome) == result


def test_the_record_reaches_the_store_the_status_page_reads(tmp_path: Path) -> None:
    state = memory_state()
    context = build_context(Settings(data_dir=tmp_path / "data"), state)
    audit_onboarding(context, "gitea", "o/r", audited(OnboardingOutcome("no-candidates")))
    (record,) = state.audit.recent()
    assert (record.forge, record.repo, record.actor, record.verb) == (
        "gitea",
        "o/r",
        "ichor-bot",
        "onboard",
    )
    assert record.result.startswith("refused: no folder looks like a GitTarget path")
