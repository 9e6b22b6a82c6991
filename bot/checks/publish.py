"""Post a finished comparison: the summary comment, the check's verdict, the line comments.

The summary comment goes first where there is one, so the commit status can link to it; line
comments last, so a failure there never costs the verdict.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.checks.compare import CheckComparison
from bot.checks.findings import TouchedLines, line_findings
from bot.checks.output import check_output, summary_comment
from bot.errors import ForgeError
from bot.forges.base import CheckHandle, CheckOutput, ForgeAdapter, LineCommentSync
from bot.repos import RepoRef
from bot.state.base import LineCommentMemory

log = logging.getLogger("ichor.check")


# When the bot never left line comments on a pull request and there is nothing to comment,
# syncing (listing every comment) is skipped.
PullMemory = LineCommentMemory


@dataclass(frozen=True, slots=True)
class Publication:
    repo: RepoRef
    check: CheckHandle
    number: int | None
    pull: str | None
    base_sha: str | None
    summary_comment: bool
    line_comments: bool
    line_comment_limit: int
    details_url: str | None


def publish(
    forge: ForgeAdapter,
    target: Publication,
    comparison: CheckComparison,
    touched_lines: TouchedLines,
    memory: PullMemory | None,
) -> CheckOutput:
    details_url = target.details_url
    if target.summary_comment and target.number is not None:
        body = summary_comment(comparison, details_url=target.details_url)
        try:
            url = forge.upsert_summary_comment(target.repo, target.number, body)
        except ForgeError as exc:
            # The verdict matters more than the comment: post it without the link.
            log.warning(
                "summary comment on %s#%s failed: %s", target.repo.full_name, target.number, exc
            )
        else:
            details_url = url or details_url
    output = check_output(comparison, details_url=details_url)
    forge.complete_check(target.repo, target.check, output)
    if target.line_comments and target.number is not None and target.base_sha is not None:
        _line_comments(forge, target, comparison, touched_lines, memory)
    return output


def _line_comments(
    forge: ForgeAdapter,
    target: Publication,
    comparison: CheckComparison,
    touched_lines: TouchedLines,
    memory: PullMemory | None,
) -> LineCommentSync | None:
    assert target.number is not None and target.base_sha is not None
    findings = line_findings(comparison, touched_lines)
    pull = target.pull
    if (
        not findings
        and memory is not None
        and pull is not None
        and not memory.has_line_comments(pull)
    ):
        return None  # nothing to post and nothing of ours to resolve
    try:
        result = forge.sync_line_comments(
            target.repo,
            target.number,
            head_sha=comparison.head_sha,
            base_sha=target.base_sha,
            findings=findings,
            limit=target.line_comment_limit,
        )
    except ForgeError as exc:
        # The verdict is posted already; line comments are a convenience on top of it.
        log.warning("line comments on %s#%s failed: %s", target.repo.full_name, target.number, exc)
        return None
    except Exception:  # a bug here must not turn a posted verdict into an error
        log.exception("line comments on %s#%s failed", target.repo.full_name, target.number)
        return None
    if result.posted and memory is not None and pull is not None:
        memory.remember_line_comments(pull)
    return result
