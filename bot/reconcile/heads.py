"""Whether an open pull request's head needs a check queued.

What is known of a head, cheapest first:

1. the bot's own record that a check of it ended (``bot.state.base.CheckedHeads``): done,
   with no request to the forge. It is kept only for a while and only where this bot's Redis
   is, so it cannot say "not done";
2. what the forge shows (``ichor/acceptance`` on the head), which is what branch protection
   reads and so the authority: a result (a verdict, or the error standing in for one) is
   done;
3. otherwise, whether a job has the head: a delivery of it was queued (the newest head the
   queue recorded for the pull request) or the forge shows the check running. Such a head is
   given ``grace`` from when the reconciler first found it so before a check is queued
   anyway: a job waiting in the queue, or retried, ends in a result on its own, and queuing
   another would check it twice. A head no job has (its delivery was lost) is queued now.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from bot.forges.base import HeadCheck


class Verdict(enum.StrEnum):
    DONE = "done"  # the head has its result
    WAIT = "wait"  # a job has it: left to it, for now
    QUEUE = "queue"  # no result and no job: queue a check


@dataclass(frozen=True, slots=True)
class HeadFacts:
    checked: bool  # the bot's record says a check of it ended
    shown: HeadCheck | None = None  # what the forge shows (None: not asked)
    received: bool = False  # a delivery of it was queued (the newest head recorded)
    waiting_since: float | None = None  # when the reconciler first found it waiting


def judge(facts: HeadFacts, *, now: float, grace: float) -> Verdict:
    if facts.checked or facts.shown is HeadCheck.FINAL:
        return Verdict.DONE
    has_job = facts.shown is HeadCheck.RUNNING or facts.received
    fresh = facts.waiting_since is None or now - facts.waiting_since < grace
    return Verdict.WAIT if has_job and fresh else Verdict.QUEUE


def forge_asked(facts: HeadFacts, *, now: float, grace: float) -> bool:
    """Whether the forge must be asked: the bot's own record says nothing, and no job is known
    to have the head within its grace (then it is left to the job, at no request's cost)."""
    if facts.checked:
        return False
    fresh = facts.waiting_since is not None and now - facts.waiting_since < grace
    return not (facts.received and fresh)
