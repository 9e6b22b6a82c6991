"""Line comments on a Gitea (or Forgejo) pull request, for :class:`bot.forges.gitea.GiteaForge`.

Line comments are posted as one ``COMMENT`` review per sync, each comment carrying its
finding's fingerprint (:func:`bot.forges.base.finding_marker`). A bot comment whose finding is
gone is resolved with ``POST /repos/{o}/{r}/pulls/comments/{id}/resolve``, which Gitea 1.27
describes and Forgejo 16 does not; neither lets a token edit a review comment, and deleting is
not ours to do. So the first resolve is a probe: a 404 or 405 there means this server has no
such route, and this adapter leaves fixed comments alone from then on (Gitea and Forgejo still
mark a comment outdated by themselves once a push changes its line). A comment the bot
resolved whose finding comes back is unresolved; one a person resolved is left as it is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from bot.errors import ForgeStatusError
from bot.forges.base import LineCommentSync, LineFinding, marker_fingerprint
from bot.forges.gitea.http import GiteaHTTP, field, repo_path, review_payload, same_user
from bot.forges.plans import LineComment, plan_line_comments
from bot.repos import RepoRef

log = logging.getLogger("ichor.forge.gitea")

Me = Callable[[], dict[str, Any]]  # the token's user, asked once per adapter


class LineComments:
    """The bot's review comments; remembers whether this server can resolve one."""

    def __init__(self, http: GiteaHTTP, label: str) -> None:
        self._http = http
        self._label = label
        self._can_resolve: bool | None = None  # None: no resolve tried yet

    def sync(
        self,
        repo: RepoRef,
        number: int,
        *,
        head_sha: str,
        findings: Sequence[LineFinding],
        limit: int,
        me: Me,
    ) -> Callable[[], LineCommentSync]:
        """One attempt of a sync, to be retried whole: each attempt lists again first."""
        wanted = len({f.fingerprint for f in findings})
        # Counts survive a retried attempt, which re-lists and so sees its own earlier posts;
        # a batch whose answer was lost is counted as posted once the listing shows it.
        done = {"posted": 0, "resolved": 0}
        unconfirmed: set[str] = set()

        def attempt() -> LineCommentSync:
            mine = me()
            ours = self._bot_review_comments(repo, number, mine)
            done["posted"] += len(unconfirmed & {fingerprint for fingerprint, _ in ours})
            unconfirmed.clear()
            existing = [
                LineComment(
                    i,
                    fingerprint,
                    resolved=isinstance(comment.get("resolver"), dict),
                    reopenable=same_user(comment.get("resolver"), mine),
                )
                for i, (fingerprint, comment) in enumerate(ours)
            ]
            plan = plan_line_comments(existing, findings, limit - done["posted"])
            if plan.post:
                unconfirmed.update(f.fingerprint for f in plan.post)
                self._post_review(repo, number, head_sha, plan.post)
                unconfirmed.clear()
                done["posted"] += len(plan.post)
            marks = {int(c.id): False for c in plan.reopen} | {
                int(c.id): True for c in plan.resolve
            }
            for i, resolve in sorted(marks.items()):  # in listing order
                if self._mark(repo, ours[i][1], resolve=resolve) and resolve:
                    done["resolved"] += 1
            over = len(plan.over_limit)
            return LineCommentSync(
                posted=done["posted"],
                resolved=done["resolved"],
                unchanged=wanted - done["posted"] - over,
                over_limit=over,
            )

        return attempt

    def _bot_review_comments(
        self, repo: RepoRef, number: int, me: dict[str, Any]
    ) -> list[tuple[str, dict[str, Any]]]:
        """(fingerprint, comment) for every review comment of ours that carries a marker."""
        reviews = self._http.pages(repo_path(repo, f"/pulls/{int(number)}/reviews"))
        ours: list[tuple[str, dict[str, Any]]] = []
        for review in reviews:
            if not isinstance(review, dict) or not same_user(review.get("user"), me):
                continue
            if review.get("comments_count") == 0:
                continue  # a review without line comments: no request for nothing
            review_id = int(field(review, "id", "a review"))
            path = repo_path(repo, f"/pulls/{int(number)}/reviews/{review_id}/comments")
            listed = self._http.get(path)
            for comment in listed if isinstance(listed, list) else []:
                if not isinstance(comment, dict) or not same_user(comment.get("user"), me):
                    continue
                fingerprint = marker_fingerprint(str(comment.get("body") or ""))
                if fingerprint is not None:
                    ours.append((fingerprint, comment))
        return ours

    def _post_review(
        self, repo: RepoRef, number: int, head_sha: str, batch: Sequence[LineFinding]
    ) -> None:
        data = review_payload(self._label, head_sha, batch)
        path = repo_path(repo, f"/pulls/{int(number)}/reviews")
        self._http.send("POST", path, data)

    def _mark(self, repo: RepoRef, comment: dict[str, Any], *, resolve: bool = True) -> bool:
        """Resolve (or unresolve) a review comment; False when this server cannot."""
        if self._can_resolve is False:
            return False
        verb = "resolve" if resolve else "unresolve"
        comment_id = int(field(comment, "id", "a review comment"))
        path = repo_path(repo, f"/pulls/comments/{comment_id}/{verb}")
        try:
            self._http.send("POST", path)
        except ForgeStatusError as exc:
            if exc.status in (404, 405) and self._can_resolve is None:
                self._can_resolve = False
                log.info("this Gitea/Forgejo has no API to resolve review comments (%s)", exc)
            else:  # one comment we may not touch must not stop the others
                log.warning("could not %s review comment %d: %s", verb, comment_id, exc)
            return False
        self._can_resolve = True
        return True
