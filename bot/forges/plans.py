"""What to do about a change request's comments, decided from what is there: pure plans that
every adapter executes with its own forge's calls.

The bot keeps two kinds of comment on a change request. The *summary* is one comment holding
:data:`bot.forges.base.SUMMARY_MARKER`, created once and edited in place. *Line comments* each
carry one finding's hidden marker (:func:`bot.forges.base.finding_marker`), so a listing of the
bot's comments says what it said on every earlier push without any state of its own.

An adapter lists the bot's comments (deciding by its forge's means which are the bot's: a
person quoting a marker is never edited), hands them here, and carries the plan out.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.forges.base import SUMMARY_MARKER, LineFinding

# -- the summary comment ----------------------------------------------------------------------


def summary_body(body: str) -> str:
    """``body`` with the summary marker, added at the top when it does not hold it yet."""
    return body if SUMMARY_MARKER in body else f"{SUMMARY_MARKER}\n{body}"


@dataclass(frozen=True, slots=True)
class PostedComment:
    """A comment already on the change request; ``by_bot`` as the adapter's forge tells."""

    id: int | str
    body: str
    by_bot: bool


class SummaryAction(enum.Enum):
    CREATE = "create"  # no summary yet: post one
    EDIT = "edit"  # the summary says something else: edit it in place
    KEEP = "keep"  # it already says this: no request


@dataclass(frozen=True, slots=True)
class SummaryPlan:
    action: SummaryAction
    existing: PostedComment | None = None  # the summary found, unless CREATE


def plan_summary(comments: Iterable[PostedComment], body: str) -> SummaryPlan:
    """What to do to show ``body`` (already through :func:`summary_body`) as the summary.

    The first of the bot's comments holding the marker is the summary. Forges drop trailing
    whitespace from what they store, so a body differing only there is already shown.
    """
    mine = next((c for c in comments if c.by_bot and SUMMARY_MARKER in c.body), None)
    if mine is None:
        return SummaryPlan(SummaryAction.CREATE)
    if mine.body.rstrip() == body.rstrip():
        return SummaryPlan(SummaryAction.KEEP, mine)
    return SummaryPlan(SummaryAction.EDIT, mine)


# -- line comments ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LineComment:
    """One of the bot's line comments, listed oldest first.

    ``resolved``: resolved, or marked fixed. ``reopenable``: resolved by the bot (or by a
    push), never by a person, whose decision a returning finding must not overrule.
    """

    id: int | str
    fingerprint: str
    resolved: bool = False
    reopenable: bool = True


@dataclass(frozen=True, slots=True)
class LineCommentPlan:
    post: tuple[LineFinding, ...]  # new findings to comment, within the limit, in order
    over_limit: tuple[LineFinding, ...]  # new findings beyond it: left for the summary
    resolve: tuple[LineComment, ...]  # open comments whose finding is gone
    reopen: tuple[LineComment, ...]  # resolved comments whose finding is back
    unchanged: int  # wanted findings that already have a comment

    @property
    def resolved_findings(self) -> int:
        """How many findings :attr:`resolve` closes (a finding may have several comments)."""
        return len({c.fingerprint for c in self.resolve})


def plan_line_comments(
    existing: Iterable[LineComment], wanted: Sequence[LineFinding], limit: int
) -> LineCommentPlan:
    """Bring the bot's line comments in line with ``wanted``, posting at most ``limit`` new.

    A finding is wanted once, by fingerprint (the first wins). One without a comment is new. A
    comment whose finding is gone is resolved when open. A finding that comes back with none
    of its comments open has its newest reopenable comment reopened, not a second one posted.
    """
    by_fingerprint: dict[str, list[LineComment]] = {}
    for comment in existing:
        by_fingerprint.setdefault(comment.fingerprint, []).append(comment)
    findings: dict[str, LineFinding] = {}
    for finding in wanted:
        findings.setdefault(finding.fingerprint, finding)
    new = [f for key, f in findings.items() if key not in by_fingerprint]
    room = max(0, limit)
    resolve: list[LineComment] = []
    reopen: list[LineComment] = []
    for fingerprint, comments in by_fingerprint.items():
        open_ = [c for c in comments if not c.resolved]
        if fingerprint not in findings:
            resolve.extend(open_)
        elif not open_:
            back = [c for c in comments if c.reopenable]
            reopen.extend(back[-1:])
    return LineCommentPlan(
        post=tuple(new[:room]),
        over_limit=tuple(new[room:]),
        resolve=tuple(resolve),
        reopen=tuple(reopen),
        unchanged=len(findings) - len(new),
    )
