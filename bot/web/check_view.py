"""A kept check as the status page shows it: its links on the forge, how long it waited and ran,
its verdict as a glyph and a word, and its issues split into new ones and those already on
base, each linked to its file and line at the checked commit.

Links are made for the forge the repository lives on: where the result was posted when that
differs from the delivery's forge (the ``local`` forge has no web pages, so no links).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.state.check_facts import Finding
from bot.state.history import CheckEntry, DeliveryEntry
from bot.web import links

# A conclusion's glyph, shown beside the conclusion's word: the glyph is decoration
# (aria-hidden), the word is what is read. They are text symbols most fonts have (DejaVu,
# Liberation, system UI fonts), not emoji: a machine without an emoji font would show a box.
GLYPHS = {
    "success": "✓",
    "failure": "✗",
    "neutral": "–",
    "action_required": "⚑",
    "error": "⚠",
}
TARGET_VERDICTS = {"accepted": "✓", "refused": "✗"}
# The web process answers and the worker starts on different clocks (and the answer is noted
# just after the job is queued): a queued time this far past the start still counts.
_CLOCK_SLACK = 2.0


def verdict(conclusion: str) -> tuple[str, str]:
    """The glyph ("" for none) and the word of a check's conclusion."""
    return GLYPHS.get(conclusion, ""), conclusion.replace("_", " ")


def seconds(value: float) -> str:
    """A duration for people: ``0.4 s``, ``12 s``, ``3 min 5 s``, ``2 h 3 min``."""
    value = max(value, 0.0)
    if value < 10:
        return f"{value:.1f} s"
    whole = round(value)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        minutes, rest = divmod(whole, 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, rest = divmod(whole, 3600)
    return f"{hours} h {rest // 60} min" if rest >= 60 else f"{hours} h"


@dataclass(frozen=True, slots=True)
class Timing:
    """Queued (the delivery's answer), started (the job), posted (the check kept)."""

    queued: float | None
    started: float | None
    posted: float

    @property
    def waited(self) -> str | None:
        if self.queued is None or self.started is None:
            return None
        return seconds(self.started - self.queued)

    @property
    def ran(self) -> str | None:
        return None if self.started is None else seconds(self.posted - self.started)

    @property
    def total(self) -> str | None:
        first = self.queued if self.queued is not None else self.started
        return None if first is None else seconds(self.posted - first)


def queued_at(
    job_id: str, started: float | None, deliveries: Sequence[DeliveryEntry]
) -> float | None:
    """When the delivery that queued this run of the job was answered: the newest 202 for the
    job no later than its start (a redelivery queues the job again). None when it is no longer
    among the deliveries kept, or the check was kept without its job."""
    if not job_id or started is None:
        return None
    times = [
        d.at
        for d in deliveries
        if d.job_id == job_id and d.status == 202 and d.at <= started + _CLOCK_SLACK
    ]
    return max(times, default=None)


@dataclass(frozen=True, slots=True)
class FindingRow:
    finding: Finding
    link: str | None  # the file at the checked commit, at its line


@dataclass(frozen=True, slots=True)
class CheckView:
    entry: CheckEntry
    pull: str | None
    commit: str | None
    timing: Timing
    new: tuple[FindingRow, ...] = ()
    existing: tuple[FindingRow, ...] = ()

    @property
    def glyph(self) -> str:
        return verdict(self.entry.conclusion)[0]

    @property
    def word(self) -> str:
        return verdict(self.entry.conclusion)[1]

    @property
    def where(self) -> str:
        """The pull request, or the branch pushed, as a row names it."""
        entry = self.entry
        if entry.number is not None:
            return f"#{entry.number}"
        branch = entry.facts.branch if entry.facts is not None else None
        return branch or "push"

    @property
    def unlisted(self) -> int:
        """Issues counted but not kept (past the limit of what is kept per check)."""
        facts = self.entry.facts
        return 0 if facts is None else facts.finding_count - len(facts.findings)


def forge_of_pages(entry: CheckEntry) -> str:
    """The forge whose web pages the links point to: where the result was posted."""
    return entry.posted_to or entry.forge


def check_view(
    entry: CheckEntry, deliveries: Sequence[DeliveryEntry], *, findings: bool = False
) -> CheckView:
    """``findings``: also the issues with their links (the check's own page)."""
    forge = forge_of_pages(entry)
    timing = Timing(
        queued_at(entry.job_id, entry.started_at, deliveries), entry.started_at, entry.at
    )
    view = CheckView(
        entry,
        links.pull_url(forge, entry.web_url, entry.number),
        links.commit_url(forge, entry.web_url, entry.head_sha),
        timing,
    )
    if not findings or entry.facts is None:
        return view
    rows = [
        FindingRow(f, links.blob_url(forge, entry.web_url, entry.head_sha, f.path, f.line))
        for f in entry.facts.findings
    ]
    return CheckView(
        view.entry,
        view.pull,
        view.commit,
        timing,
        tuple(r for r in rows if r.finding.new),
        tuple(r for r in rows if not r.finding.new),
    )
