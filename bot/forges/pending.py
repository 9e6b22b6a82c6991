"""Stand-ins for the comment-command calls an adapter does not make yet (issue 13 in progress).

Each raises, so a command job on that forge ends in a visible error instead of a silent skip.
An adapter that implements the calls stops inheriting this class; then this module goes.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.errors import PermanentForgeError
from bot.forges.base import ForgeComment, Reaction, RepoRef


class CommentCommandsPending:
    name: str

    def _pending(self, what: str) -> PermanentForgeError:
        return PermanentForgeError(f"{what} is not available on {self.name} yet")

    async def bot_login(self, repo: RepoRef) -> str:
        raise self._pending("reading the bot's own login")

    async def add_reaction(
        self, repo: RepoRef, number: int, comment_id: str, reaction: Reaction
    ) -> None:
        raise self._pending("reacting to a comment")

    async def post_comment(self, repo: RepoRef, number: int, body: str) -> str | None:
        raise self._pending("replying to a comment")

    async def list_comments(self, repo: RepoRef, number: int) -> Sequence[ForgeComment]:
        raise self._pending("listing comments")
