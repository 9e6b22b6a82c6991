"""The onboarding body's "What to expect" (design.md 6.6), after Renovate's onboarding. Pure.

What merging changes for the team: which open pull requests the check would block today, what
the comment commands do, that the description follows edits to the proposal, and that closing
the pull request opts out. The open pull requests are the job's to gather (a preview has no
forge, and says so): :class:`OpenPulls` holds what it found, :func:`pull_verdict` the verdict
on one of them from the paths it changes and the gate on its head.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from bot.checks.compare import touched_targets
from bot.checks.markdown_text import inline_path, inline_text
from bot.forges.base import CHECK_NAME
from bot.gate.codes import Severity
from bot.gate.policy import GatePolicy
from bot.gate.report import TargetReport, Verdict

BRANCH: Final = "ichor/bootstrap"
SHOWN_PULLS: Final = 20
_TITLE_SHOWN: Final = 120


@dataclass(frozen=True, slots=True)
class PullVerdict:
    """One open pull request as the check would judge it once the proposal is merged."""

    number: int
    url: str
    title: str | None
    touched: tuple[str, ...]  # the targets it touches, by name
    blocked_by: tuple[str, ...]  # those refused at its head
    errors: int = 0  # their errors at its head


@dataclass(frozen=True, slots=True)
class OpenPulls:
    """The open pull requests into ``base``: each checked one, and those listed but not
    checked (over the job's bound, or a head that could not be fetched), by number; or why
    they could not be listed."""

    base: str
    checked: tuple[PullVerdict, ...]
    unchecked: tuple[int, ...] = ()
    failed: str | None = None


def pull_verdict(
    number: int,
    url: str,
    title: str | None,
    policy: GatePolicy,
    changed: Collection[str],
    head: Mapping[str, TargetReport],
) -> PullVerdict:
    """``head`` is the gate at the pull request's head with the proposal's files, by target."""
    touched = tuple(t.name for t in touched_targets(policy, changed))
    blocked = tuple(
        n for n in touched if (r := head.get(n)) is not None and r.verdict is Verdict.REFUSED
    )
    errors = sum(1 for n in blocked for i in head[n].issues if i.severity is Severity.ERROR)
    return PullVerdict(number, url, title, touched, blocked, errors)


def expect_lines(pulls: OpenPulls | None, reports: Mapping[str, TargetReport]) -> list[str]:
    lines = [
        "",
        "### What to expect",
        "",
        f"After merging, the check `{CHECK_NAME}` runs on every push and pull request. A pull "
        "request fails while a target it touches is refused: every issue counts (`enforce: "
        "all`); with `enforce: new` on a target, only the issues a pull request introduces do.",
        "",
        *_pull_lines(pulls, reports),
        "",
        "**Commands**, each a line of a new comment on a pull request:",
        "- `/recheck` checks it again; `/help` lists the commands and this repository's targets.",
        "- `/ignore PATTERN [in TARGET]` opens a pull request adding `PATTERN` to the target's "
        "`.gittargetignore`.",
        "- `/approve` approves the new objects of a `mode: strict` target, which wait for it; "
        "`/approve NS/NAME`, `/reject NS/NAME` and `/delete KIND NS/NAME` open pull requests "
        "that change one object.",
        "- Commands that change something need `write` permission (`commands.min_permission`).",
        "",
        f"**Changing this proposal**: push your edits (to `.ichor.yaml` or any file) to the "
        f"branch `{BRANCH}`; the bot checks the proposed tree again and rewrites this "
        "description with fresh verdicts.",
        "",
        "**Close this pull request to opt out.** The bot does not propose it again, and stays "
        "silent in this repository while it has no `.ichor.yaml`; `ichor-bot onboard` proposes "
        "it again on request.",
    ]
    return lines


def _pull_lines(pulls: OpenPulls | None, reports: Mapping[str, TargetReport]) -> list[str]:
    if pulls is None:
        return [
            "**Open pull requests**: this preview ran without a forge, so it cannot say which "
            "open pull requests the check would block; the onboarding pull request the bot "
            "opens lists them.",
            *_refused_today(reports),
        ]
    base = inline_path(pulls.base)
    if pulls.failed is not None:
        return [
            f"**Open pull requests** into {base}: they could not be listed "
            f"({inline_text(pulls.failed, 300)}), so this cannot say which the check would block.",
            *_refused_today(reports),
        ]
    total = len(pulls.checked) + len(pulls.unchecked)
    if total == 0:
        return [f"**Open pull requests**: none into {base}, so merging this blocks none today."]
    blocked = [p for p in pulls.checked if p.blocked_by]
    lines = [
        f"**Open pull requests** into {base}: {len(blocked)} of the {len(pulls.checked)} "
        f"checked would be blocked today (each checked as if rebased onto this one):"
    ]
    for pull in blocked[:SHOWN_PULLS]:
        targets = ", ".join(f"`{n}`" for n in pull.blocked_by)
        said = f"{pull.errors} error{'s' * (pull.errors != 1)}"
        lines.append(f"- {_pull(pull)}: touches {targets}, refused at its head ({said})")
    if len(blocked) > SHOWN_PULLS:
        lines.append(f"- … and {len(blocked) - SHOWN_PULLS} more")
    passing = len(pulls.checked) - len(blocked)
    if passing:
        lines.append(
            f"- {passing} more touch{'es' * (passing == 1)} no target, or only targets that "
            "accept them"
        )
    if pulls.unchecked:
        shown = ", ".join(f"#{n}" for n in pulls.unchecked[:SHOWN_PULLS])
        lines.append(f"- not checked (too many, or their head could not be fetched): {shown}")
    if pulls.checked:
        lines += [
            "",
            "Until one of them is rebased onto the merged proposal, its head lacks the "
            "capabilities files, so a target it touches cannot follow its custom types.",
        ]
    return lines


def _refused_today(reports: Mapping[str, TargetReport]) -> list[str]:
    refused = sorted(n for n, r in reports.items() if r.verdict is Verdict.REFUSED)
    if not refused:
        return []
    return [
        "",
        f"Until their issues are fixed, a pull request that touches {_names(refused)} would fail.",
    ]


def _pull(pull: PullVerdict) -> str:
    # Not a reference: the forge would note this pull request on each of them.
    title = f" {inline_text(pull.title, _TITLE_SHOWN)}" if pull.title else ""
    return f"#&#8203;{pull.number}{title}"


def _names(names: Sequence[str]) -> str:
    shown = [f"`{n}`" for n in names]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
