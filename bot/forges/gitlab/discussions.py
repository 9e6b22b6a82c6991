"""GitLab diff discussions: the bot's line comments on a merge request, one discussion per
finding, resolved when the finding is gone and reopened when it comes back (unless a person
resolved it). Runs under :meth:`.api.GitLabAPI.run`."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.errors import ForgeStatusError
from bot.forges.base import LineCommentSync, LineFinding, finding_marker, marker_fingerprint
from bot.forges.gitlab.api import NOTE_LIMIT, PER_PAGE, by_bot, clip
from bot.forges.plans import LineComment, plan_line_comments

log = logging.getLogger("ichor.forge.gitlab")


@dataclass
class Done:
    """What earlier attempts of one sync did: a retry after a failure half-way counts (and
    limits) those instead of treating them as found."""

    posted: set[str] = field(default_factory=set)
    resolved: set[str] = field(default_factory=set)


def sync_discussions(
    mr: Any,
    where: str,
    me: int,
    head_sha: str,
    findings: Sequence[LineFinding],
    limit: int,
    done: Done,
) -> LineCommentSync:
    """Bring the bot's discussions on ``mr`` in line with ``findings`` (see the module doc)."""
    # Newest first; a position must name the latest version's three shas exactly.
    latest = next(iter(mr.diffs.list(iterator=True)), None)
    version = latest.attributes if latest is not None else {}
    if version.get("head_commit_sha") != head_sha:
        log.info(
            "%s: head is %s, not %s; line comments left to the newer push",
            where,
            version.get("head_commit_sha"),
            head_sha,
        )
        return LineCommentSync()
    ours = our_discussions(mr.discussions.list(iterator=True, per_page=PER_PAGE), me)
    again = {c.fingerprint for c in ours} & done.posted  # an earlier attempt's
    # Every new finding is planned: the limit counts the posts GitLab took, below, for
    # a refused position must not cost the next finding its comment.
    plan = plan_line_comments(ours, findings, len(findings))
    reopen = {c.fingerprint: c.id for c in plan.reopen}
    new = {f.fingerprint for f in plan.post}
    posted, over_limit = len(again), 0
    for finding in _each_once(findings):  # in order: reopens and posts interleave
        if finding.fingerprint in reopen:
            mr.discussions.update(reopen[finding.fingerprint], {"resolved": False})
        elif finding.fingerprint not in new:
            continue
        elif posted >= limit:
            over_limit += 1
        elif post_discussion(mr, finding, version):
            done.posted.add(finding.fingerprint)
            posted += 1
        else:
            over_limit += 1  # GitLab refused its position: left for the summary
    for comment in plan.resolve:
        mr.discussions.update(comment.id, {"resolved": True})
        done.resolved.add(comment.fingerprint)
    gone = {c.fingerprint for c in ours} - {f.fingerprint for f in findings}
    resolved = len(gone & done.resolved)
    return LineCommentSync(posted, resolved, plan.unchanged - len(again), over_limit)


def our_discussions(listed: Iterable[Any], me: int) -> list[LineComment]:
    """The bot's finding discussions, one per fingerprint: the first note is the bot's and
    holds a marker. Reopenable: resolved by the bot (or by a push), never by a person."""
    ours: dict[str, LineComment] = {}
    for discussion in listed:
        notes = discussion.attributes.get("notes") or []
        first = notes[0] if notes and isinstance(notes[0], dict) else {}
        if not by_bot(first, me):
            continue
        fingerprint = marker_fingerprint(str(first.get("body") or ""))
        if fingerprint is None or fingerprint in ours:
            continue
        resolver = first.get("resolved_by")
        resolver_id = resolver.get("id") if isinstance(resolver, dict) else None
        ours[fingerprint] = LineComment(
            id=discussion.attributes["id"],
            fingerprint=fingerprint,
            resolved=bool(first.get("resolved")),
            reopenable=resolver_id in (None, me) or bool(first.get("resolved_by_push")),
        )
    return list(ours.values())


def post_discussion(mr: Any, finding: LineFinding, version: dict[str, Any]) -> bool:
    """One new discussion on the diff; False when GitLab refuses the position (a line
    outside the diff), which must not cost the other findings their comments."""
    position = {
        "position_type": "text",
        "base_sha": version.get("base_commit_sha"),
        "start_sha": version.get("start_commit_sha"),
        "head_sha": version.get("head_commit_sha"),
        # An added file needs old_path too, equal to new_path (findings are on new lines).
        "new_path": finding.path,
        "old_path": finding.path,
        "new_line": finding.line,
    }
    body = clip(finding.body, NOTE_LIMIT - 100) + "\n\n" + finding_marker(finding.fingerprint)
    try:
        mr.discussions.create({"body": body, "position": position})
    except ForgeStatusError as exc:
        if exc.status != 400:
            raise
        log.warning("%s:%d: GitLab refused the line comment: %s", finding.path, finding.line, exc)
        return False
    return True


def _each_once(findings: Sequence[LineFinding]) -> list[LineFinding]:
    """The first finding of each fingerprint, in order."""
    first: dict[str, LineFinding] = {}
    for finding in findings:
        first.setdefault(finding.fingerprint, finding)
    return list(first.values())
