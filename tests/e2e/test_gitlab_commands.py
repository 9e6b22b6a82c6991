"""End to end on GitLab, what only GitLab needs: a bot whose account name looks like anyone's.
The commands themselves, on every forge: :mod:`tests.e2e.test_commands`."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.drivers import GitLab
from tests.e2e.harness import Bot
from tests.e2e.test_commands import STRICT, TWO_NEW, WAIT_2
from tests.fakeforge.gitlab import FakeGitLab


def test_the_bots_own_comment_under_a_plain_username_does_nothing(bot: Bot, tmp_path: Path) -> None:
    """A personal access token of an account whose name looks like anyone's: the hook cannot
    tell it is the bot, so the job asks GitLab who it is, and stops there."""
    with FakeGitLab(tmp_path / "forge-git", bot_username="gitops-guard") as fake:
        forge = GitLab(fake, bot, tmp_path)
        head = forge.open(TWO_NEW, STRICT)
        forge.reset_calls()
        own = forge.comment("/approve", user="gitops-guard")
        forge.work()
        assert forge.calls() == ["GET /api/v4/user 200"]
        assert forge.reactions(own) == []
        assert forge.replies() == ["/approve"]  # its own, and no reply to it
        assert forge.states(head) == forge.checked(forge.WAITING)
        assert forge.verdict() == (forge.WAITING, WAIT_2)
        forge.finish()
