"""``ichor-bot replay`` signs a recorded payload as its forge would, and the app accepts it."""

from __future__ import annotations

import pytest

from bot.cli.main import main
from tests.conftest import FIXTURES
from tests.web.conftest import SECRETS, Serve


@pytest.mark.parametrize(
    ("forge", "fixture"),
    [
        ("github", "github/pull_request__synchronize.json"),
        ("gitlab", "gitlab/merge_request__update-woodpecker.json"),
        ("gitea", "gitea/pull_request__synchronized.json"),
        ("forgejo", "gitea/push__branch.json"),
    ],
)
def test_replay_is_accepted(
    forge: str, fixture: str, serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    running = serve()  # on Redis with no worker: the job stays queued, so the second is a duplicate
    secret = SECRETS["gitea" if forge == "forgejo" else forge]
    args = ["replay", str(FIXTURES / "webhooks" / fixture), "--forge", forge]
    code = main([*args, "--url", running.url, "--secret", secret, "--delivery", "d-1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.startswith("202 ") and '"queued"' in out
    assert main([*args, "--url", running.url, "--secret", secret, "--delivery", "d-1"]) == 0
    assert '"duplicate"' in capsys.readouterr().out


def test_replay_with_a_wrong_secret_fails(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    running = serve(redis_url=None)
    path = str(FIXTURES / "webhooks/github/pull_request__opened.json")
    code = main(["replay", path, "--forge", "github", "--url", running.url, "--secret", "nope"])
    assert code == 1
    assert capsys.readouterr().out.startswith("401 ")


def test_replay_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["replay", "/nonexistent.json", "--forge", "github", "--secret", "s"])
    assert code == 2
    assert capsys.readouterr().err.startswith("ichor-bot: error: cannot read /nonexistent.json")
