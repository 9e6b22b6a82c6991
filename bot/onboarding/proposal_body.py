"""The onboarding pull request's title and body (design.md 6.6). Pure.

The body says what the pull request adds (or, when nothing qualified, why it proposes one new,
empty target), the gate's verdict per proposed target, the folders it does not propose and
why, each target's section (:mod:`bot.onboarding.target_sections`: role counts, where each type of
its capabilities file came from, refused files by code with their fixes), what to expect
(:mod:`bot.onboarding.expect`), and how to make ``ichor/acceptance`` a required check on the
forge at hand. Every path and message comes from the repository, so it is escaped
(:mod:`bot.checks.markdown_text`); the body stays within a forge's size limit by listing fewer
files, never by cutting markdown in the middle.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.checks.markdown_text import inline_path, inline_text
from bot.forges.base import CHECK_NAME
from bot.onboarding.detect import LeftOut
from bot.onboarding.empty import SOPS_CONFIG
from bot.onboarding.expect import BRANCH as BRANCH
from bot.onboarding.expect import OpenPulls, expect_lines
from bot.onboarding.proposal import Proposal
from bot.onboarding.target_sections import SHOWN_PER_CODE as SHOWN_PER_CODE
from bot.onboarding.target_sections import target_parts, verdict_text
from bot.repos import ForgeKind

TITLE = "ichor: guard this repository's GitTarget paths"
MARKER = "<!-- ichor:onboarding -->"  # tells the bot's onboarding pull request from people's
# GitHub refuses a body over 65,536 characters; the rest is room for what the forge section
# and the closing lines need.
MAX_BODY = 60_000
SHOWN_LEFT_OUT = 25
SHOWN_PARTS = 8
_MORE_ROOM = 120  # the "... and N more" line a code may need

_GITHUB = f"""\
**GitHub**: in the repository's *Settings*, either
- *Rules* → *Rulesets* → *New branch ruleset*: target the default branch, turn on *Require
  status checks to pass*, and add the check `{CHECK_NAME}`; or
- *Branches* → *Add branch protection rule* for the default branch: turn on *Require status
  checks to pass before merging* and search for `{CHECK_NAME}`.

The check is offered once it has run on a commit: after merging, on the push to the default
branch."""

_GITLAB = f"""\
**GitLab** cannot require a commit status by name, and the bot posts `{CHECK_NAME}` as one. It
shows in an external stage of the commit's pipeline, but *Pipelines must succeed* does not
apply to it reliably: a newer CI pipeline of the same commit does not carry it. On GitLab
Ultimate, *Settings* → *Merge requests* → *Merge checks*: *Status checks must succeed* blocks
merging on external status checks (*Settings* → *Merge requests* → *Status checks*); an
external status check is answered through GitLab's status check API, which this version of the
bot does not call yet. On every tier, an approval rule (*Settings* → *Merge requests*, or the
merge request approvals API) makes a merge wait for a reviewer, who approves once
`{CHECK_NAME}` passed."""

_GITEA = f"""\
**Gitea and Forgejo**: in the repository's *Settings* → *Branches*, add a branch protection
rule for the default branch, turn on *Enable status check*, enter `{CHECK_NAME}` as a status
check pattern, and save."""

_FORGE_STEPS = {ForgeKind.GITHUB: _GITHUB, ForgeKind.GITLAB: _GITLAB, ForgeKind.GITEA: _GITEA}


def forge_steps(forge: str) -> str:
    """How to require the check on ``forge`` (``github``, ``gitlab``, ``gitea``; Forgejo is
    ``gitea``); for any other forge, the steps of all three."""
    kind = {"forgejo": ForgeKind.GITEA}.get(forge)
    try:
        kind = kind or ForgeKind(forge)
    except ValueError:
        return "\n\n".join(_FORGE_STEPS.values())
    return _FORGE_STEPS[kind]


def onboarding_body(proposal: Proposal, forge: str, pulls: OpenPulls | None = None) -> str:
    """The body; ``pulls`` are the open pull requests the job looked at (None: it could not,
    as in a preview)."""
    reports = {t.candidate.name: t.report for t in proposal.targets if t.report is not None}
    head = [MARKER, *_intro(proposal), ""]
    tail = [
        *expect_lines(pulls, reports),
        "",
        f"### Make `{CHECK_NAME}` a required check",
        "",
        "After merging, each push and pull request gets the check; to stop a refused change "
        "from being merged, require it:",
        "",
        forge_steps(forge),
        "",
        "### Before merging",
        "",
        "Rename, remove or add targets, or set `mode: strict` where new objects should wait for "
        "an `/approve`: the file explains each key.",
    ]
    overview = [*_overview(proposal), *_left_out(proposal.left_out)]
    parts = [target_parts(t) for t in proposal.targets]
    # What every section needs whatever the files: when even that does not fit, each code is
    # said in one line, without its files and fix.
    fixed = sum(
        _length(lines) + sum(_length(code.head) + _MORE_ROOM for code in codes)
        for lines, codes in parts
    )
    room = MAX_BODY - _length(head) - _length(tail) - _length(overview) - fixed
    sections = list(overview)
    for lines, codes in parts:
        sections += lines
        for code in codes:
            if room < 0:
                sections.append(code.compact)
                continue
            sections += code.head
            shown = 0
            for item in code.items:
                if len(item) + 1 > room:
                    break
                sections.append(item)
                room -= len(item) + 1
                shown += 1
            if shown < code.total:
                sections.append(
                    f"  - … and {code.total - shown} more: `ichor-bot check` at the repository "
                    "root lists every one"
                )
    if room < 0:
        sections += [
            "",
            "The files and their fixes do not fit here: `ichor-bot check` at the "
            "repository root lists every one.",
        ]
    return "\n".join(head + sections + tail)


def _intro(proposal: Proposal) -> list[str]:
    n = len(proposal.targets)
    with_capabilities = sum(1 for t in proposal.targets if t.capabilities)
    adds = (
        f"`.ichor.yaml` with {n} target{'s' * (n != 1)}, the folders whose YAML is mostly "
        "Kubernetes objects"
    )
    if proposal.config_issues:
        return [
            "Ichor Bot proposes to guard this repository, but the `.ichor.yaml` on this branch "
            "cannot be read:",
            "",
            *(
                f"- `{inline_text(i.kind, 80)}`"
                + (f" (line {i.line})" if i.line else "")
                + f": {inline_text(i.message, 300)}"
                for i in proposal.config_issues
            ),
            "",
            "Correct it and push again: this description follows.",
        ]
    if proposal.empty:
        target = proposal.targets[0].candidate
        sops = (
            f", and a `{SOPS_CONFIG}` with the recipients of {inline_text(proposal.sops, 300)}"
            if proposal.sops
            else ""
        )
        unknown = (
            f" The repository uses SOPS, but no `{SOPS_CONFIG}` rule or encrypted file names "
            f"a recipient, so add the target's `{SOPS_CONFIG}` yourself."
            if proposal.sops_unknown
            else ""
        )
        return [
            "Ichor Bot proposes to guard this repository. No folder of it qualifies as a "
            "GitTarget path (the folders with Kubernetes YAML are listed under *Not proposed* "
            "below, with why), so this pull request proposes one new, empty target, "
            f"`{target.name}` at {inline_path(target.path)}, for the operator to mirror a "
            f"cluster into: `.ichor.yaml` naming it, and in the folder a README.md and a fully "
            f"commented `.gittargetignore`{sops}.{unknown} Nothing is checked until it is "
            "merged."
        ]
    capabilities = (
        f", a capabilities file for the {with_capabilities} whose objects use types "
        "Kubernetes itself does not serve"
        if with_capabilities
        else ""
    )
    return [
        f"Ichor Bot proposes to guard this repository. This pull request adds {adds}, each "
        "accepted by the check or refused only for issues with a fix given below"
        f"{capabilities}, and a README.md and a commented `.gittargetignore` in each target "
        "that has none. Nothing is checked until it is merged."
    ]


def _length(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _overview(proposal: Proposal) -> list[str]:
    lines = ["| target | path | verdict | objects found |", "| --- | --- | --- | --- |"]
    for t in proposal.targets:
        c = t.candidate
        found = "a new folder" if c.documents == 0 else f"{c.objects} of {c.documents} documents"
        lines.append(
            f"| `{c.name}` | {inline_path(c.path or '.')} | {verdict_text(t.report)} | {found} |"
        )
    return lines


def _left_out(left_out: Sequence[LeftOut]) -> list[str]:
    if not left_out:
        return []
    lines = [
        "",
        "### Not proposed",
        "",
        "Folders whose YAML looks like Kubernetes objects, left out:",
    ]
    for x in left_out[:SHOWN_LEFT_OUT]:
        where = f" ({inline_path(x.where)})" if x.where else ""
        parts = ""
        if x.parts:
            shown = ", ".join(inline_path(p) for p in x.parts[:SHOWN_PARTS])
            more = f" and {len(x.parts) - SHOWN_PARTS} more" if len(x.parts) > SHOWN_PARTS else ""
            parts = f"; looked at instead: {shown}{more}"
        lines.append(f"- {inline_path(x.path or '.')}: {inline_text(x.reason, 300)}{where}{parts}")
    if len(left_out) > SHOWN_LEFT_OUT:
        lines.append(f"- … and {len(left_out) - SHOWN_LEFT_OUT} more")
    return lines
