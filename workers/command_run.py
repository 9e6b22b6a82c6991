"""What a command handler is given and what it gives back (design.md 5).

A handler reads a :class:`CommandRun`, which nobody changes, and returns a
:class:`CommandOutcome`: the sections it adds to the one reply, its audit record, and whether
the check should run again. :mod:`workers.command_jobs` looks the handler up in its table, folds
the outcomes into one reply, the audit records and at most one re-check; the handler modules
(:mod:`workers.approvals`, :mod:`workers.changes`) import this module, never that one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from bot.approvals.codeowners import CodeOwners
from bot.approvals.seen import Asked
from bot.checks.request import CheckRequest, MergeBase, pull_request
from bot.commands import Command
from bot.config.schema import ConfigResult
from bot.errors import PermanentForgeError
from bot.forges.base import PullRequestRef
from bot.repos import RepoRef
from bot.state.base import pull_key
from workers.context import Adapter, WorkerContext


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One command's audit record; the actor, repository and delivery are the run's."""

    verb: str
    result: str
    pr_url: str | None = None
    target: str | None = None
    object: str | None = None

    @property
    def line(self) -> str:
        """How the job's summary lists it."""
        return f"{self.verb}: {self.result}"


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """What one command came to: its sections of the reply (none: nothing to say), its audit
    record, and whether what the check decides may have changed."""

    sections: tuple[str, ...]
    audit: AuditRecord
    recheck: bool = False

    @classmethod
    def of(cls, verb: str, result: str, *sections: str, recheck: bool = False) -> CommandOutcome:
        return cls(sections, AuditRecord(verb, result), recheck)


@dataclass(frozen=True, slots=True)
class Asking:
    """Who asked what of which pull request, before the pull request and its base branch's
    ``.ichor.yaml`` are read (the audit records name them even when reading fails)."""

    context: WorkerContext
    adapter: Adapter
    forge: str
    delivery: str
    repo: RepoRef
    number: int
    actor: str
    source: str  # the comment's id, or check_run:<id>
    # When the comment was written, or the head of the check whose button was pressed: what
    # an /approve may cover (None: the forge did not say).
    asked: Asked | None
    resume: bool  # the job ran before: the check it started may exist

    def run(
        self, pull: PullRequestRef, config: ConfigResult, owners: CodeOwners | None = None
    ) -> CommandRun:
        asked = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return CommandRun(**asked, pull=pull, config=config, owners=owners)


@dataclass(frozen=True, slots=True)
class CommandRun(Asking):
    """One comment's (or one button's) commands, once its pull request and the base branch's
    ``.ichor.yaml`` are read: what every handler reads, and none changes."""

    pull: PullRequestRef
    config: ConfigResult
    # The base branch's CODEOWNERS, when a target's approvers are its code owners.
    owners: CodeOwners | None = None

    @property
    def pull_key(self) -> str:
        return pull_key(self.forge, self.repo.full_name, self.number)

    def head_request(self, purpose: str) -> CheckRequest:
        """The check of the pull request's current head, as a new delivery would ask it."""
        pull = self.pull
        if pull.head_sha is None or pull.base_ref is None:
            raise PermanentForgeError(f"{self.repo.full_name}#{self.number}: its head is not known")
        return pull_request(
            self.repo,
            pull.head_sha,
            MergeBase(pull.base_sha, pull.base_ref),
            self.number,
            forge=self.forge,
            external_id=f"{self.delivery}:{purpose}",
            pull_head_ref=self.adapter.forge.pull_head_ref,
            author=pull.author,
        )


# A command's handler: the run and the command (of the type it is filed under in the table).
Handler = Callable[[CommandRun, Command], CommandOutcome]
