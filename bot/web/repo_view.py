"""The status page's views across checks: the index's filters (plain GET query parameters) and
one repository's page — its targets, the latest verdict per pull request and branch, the
objects waiting for ``/approve``, the change pull requests its commands opened, its commands.

All of it is read from what the page already keeps (checks, deliveries, audit records): the
web process asks no forge, so a pull request closed since shows until a newer record says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

from bot.state.base import AuditRecord
from bot.state.check_facts import TargetLine, Waiting
from bot.state.history import CheckEntry, DeliveryEntry
from bot.web.check_view import CheckView, check_view
from bot.web.command_rows import CommandRow, command_rows, safe_link

FORGES = ("github", "gitlab", "gitea", "local")
CONCLUSIONS = ("success", "failure", "neutral", "action_required", "error")
_NAME_LIMIT = 400
# The pull request a change command opened or found, from its URL on any forge.
_PR_NUMBER = re.compile(r"/(?:pull|pulls|merge_requests)/(\d+)/?$")
_CHANGE_RESULTS = ("pr-opened", "pr-existing")


@dataclass(frozen=True, slots=True)
class Filters:
    """What the index shows: one forge, one repository, one verdict, or all (None)."""

    forge: str | None = None
    repo: str | None = None
    verdict: str | None = None

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> Filters:
        """Unknown forges and verdicts are dropped (shown as "any"), never matched as text."""
        forge = params.get("forge", "").strip()
        verdict = params.get("verdict", "").strip()
        repo = params.get("repo", "").strip()[:_NAME_LIMIT]
        return cls(
            forge if forge in FORGES else None,
            repo or None,
            verdict if verdict in CONCLUSIONS else None,
        )

    @property
    def active(self) -> bool:
        return any((self.forge, self.repo, self.verdict))

    def check(self, entry: CheckEntry) -> bool:
        return (
            (self.forge is None or entry.forge == self.forge)
            and (self.repo is None or entry.repository == self.repo)
            and (self.verdict is None or entry.conclusion == self.verdict)
        )

    def delivery(self, entry: DeliveryEntry) -> bool:
        """A delivery has no verdict: only forge and repository weigh."""
        return (self.forge is None or entry.forge == self.forge) and (
            self.repo is None or entry.repository == self.repo
        )


def page_query(params: Mapping[str, str], **changes: str | None) -> str:
    """The page's query string with ``changes`` made (None removes a parameter): the links
    that turn the refresh off or on keep the filters."""
    merged = {k: v for k, v in params.items() if k in ("forge", "repo", "verdict", "refresh")}
    for name, value in changes.items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = value
    return "?" + urlencode(merged) if merged else ""


def repository_query(forge: str, repo: str) -> str:
    """The repository page's query string (its link from every table)."""
    return urlencode({"forge": forge, "repo": repo})


@dataclass(frozen=True, slots=True)
class TargetRow:
    """A target as the newest check of a branch that touched it saw it (a pull request's when
    no push touched it), and the pull requests whose latest check it fails."""

    target: TargetLine
    check: CheckView
    refusing: tuple[CheckView, ...] = ()


@dataclass(frozen=True, slots=True)
class WaitingRow:
    waiting: Waiting
    check: CheckView


@dataclass(frozen=True, slots=True)
class ChangePull:
    """A change pull request a command opened or found, with the newest verdict kept of it."""

    command: CommandRow
    number: int | None
    check: CheckView | None


@dataclass
class RepositoryView:
    forge: str
    repo: str
    web_url: str | None = None
    targets: list[TargetRow] = field(default_factory=list)
    latest: list[CheckView] = field(default_factory=list)  # per pull request and branch
    waiting: list[WaitingRow] = field(default_factory=list)
    changes: list[ChangePull] = field(default_factory=list)
    commands: list[CommandRow] = field(default_factory=list)
    deliveries: list[DeliveryEntry] = field(default_factory=list)


def repository_view(
    forge: str,
    repo: str,
    checks: Sequence[CheckEntry],
    deliveries: Sequence[DeliveryEntry],
    records: Sequence[AuditRecord],
    forge_urls: Mapping[str, str],
) -> RepositoryView:
    """``checks`` and ``deliveries`` newest first (any repository: filtered here); ``records``
    this repository's commands, newest first."""
    own = [c for c in checks if c.forge == forge and c.repository == repo]
    mine = [d for d in deliveries if d.forge == forge and d.repository == repo]
    view = RepositoryView(forge, repo, deliveries=mine[:20])
    view.web_url = next((safe_link(c.web_url) for c in own if c.web_url), None)
    seen: set[tuple[str, object]] = set()
    by_number: dict[int, CheckView] = {}
    for entry in own:
        # One row per pull request, and per branch pushed (a push is kept per commit).
        facts = entry.facts
        where: tuple[str, object] = (
            ("pull", entry.number)
            if entry.number is not None
            else ("branch", facts.branch if facts and facts.branch else entry.head_sha)
        )
        if where in seen:
            continue
        seen.add(where)
        shown = check_view(entry, deliveries)
        view.latest.append(shown)
        if entry.number is not None:
            by_number[entry.number] = shown
            if facts is not None:
                view.waiting += [WaitingRow(w, shown) for w in facts.waiting]
    view.targets = _targets(view.latest)
    rows = command_rows([r for r in records if r.forge == forge], forge_urls)
    view.commands = rows[:20]
    opened: set[str] = set()
    for row in rows:
        url = row.record.pr_url
        if row.kind not in _CHANGE_RESULTS or not url or url in opened:
            continue
        opened.add(url)
        match = _PR_NUMBER.search(url)
        number = int(match.group(1)) if match else None
        view.changes.append(
            ChangePull(row, number, None if number is None else by_number.get(number))
        )
    return view


def _targets(latest: Sequence[CheckView]) -> list[TargetRow]:
    """Each target once: a branch's state first (pushes, newest first), then pull requests'."""
    seen: dict[str, tuple[TargetLine, CheckView]] = {}
    refusing: dict[str, list[CheckView]] = {}
    pushes = [v for v in latest if v.entry.number is None]
    pulls = [v for v in latest if v.entry.number is not None]
    for shown in (*pushes, *pulls):
        for target in shown.entry.facts.targets if shown.entry.facts else ():
            seen.setdefault(target.name, (target, shown))
            if shown.entry.number is not None and target.blocking:
                refusing.setdefault(target.name, []).append(shown)
    return [
        TargetRow(target, shown, tuple(refusing.get(name, ())))
        for name, (target, shown) in sorted(seen.items())
    ]


def change_pulls(records: Sequence[AuditRecord], forge_urls: Mapping[str, str]) -> list[CommandRow]:
    """The change pull requests commands opened or found, newest first, each once."""
    rows, opened = [], set()
    for row in command_rows(records, forge_urls):
        url = row.record.pr_url
        if row.kind in _CHANGE_RESULTS and url and (row.record.repo, url) not in opened:
            opened.add((row.record.repo, url))
            rows.append(row)
    return rows
