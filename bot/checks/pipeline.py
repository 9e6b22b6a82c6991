"""Check one revision end to end: fetch what is needed, run the gate, report on the forge.

The order keeps the forge quiet and its API calls few: nothing is posted for a head that is no
longer the newest of its pull request, nor for a repository without ``.ichor.yaml``; a check
that starts always ends (with its verdict, or with why it could not be completed), so a
required check is never left ``in_progress``.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from bot.checks.approvals import StrictObjects, remember_shown, strict_objects, with_approvals
from bot.checks.compare import CheckComparison, compare_reports, touched_targets
from bot.checks.facts import check_facts
from bot.checks.findings import TouchedLines
from bot.checks.group_approvals import with_group_approvals
from bot.checks.output import error_output
from bot.checks.publish import Publication, publish
from bot.checks.report_cache import ReportCache, report_key
from bot.checks.request import CheckRequest, MergeBase, Rerun
from bot.checks.tips import config_at
from bot.checks.trees import TreeSource
from bot.config.schema import ConfigResult
from bot.errors import (
    ForgeError,
    GitStoreError,
    IchorError,
    TransientForgeError,
)
from bot.forges.base import CheckHandle, CheckOutput, Conclusion, ForgeAdapter, GitCredentials
from bot.gate.content.cache import FactsCache
from bot.gate.policy import CONFIG_FILE, GatePolicy
from bot.gate.report import ConfigIssue, Report
from bot.gate.run import RegistryCache, run_gate
from bot.repos import RepoRef
from bot.state.audit import utc_now
from bot.state.base import (
    ApprovalStore,
    HeadReader,
    LineCommentMemory,
    ShownChecks,
    group_ended,
)
from bot.state.check_facts import CheckFacts, JobRun

log = logging.getLogger("ichor.check")


class CheckHistory(Protocol):
    """Where a posted check is kept for the status page (``bot.state.history.CheckRecorder``);
    it never raises."""

    def record(
        self,
        forge: str,
        repo: RepoRef,
        number: int | None,
        delivery_id: str,
        head_sha: str,
        output: CheckOutput,
        *,
        facts: CheckFacts | None = None,
        run: JobRun | None = None,
    ) -> None: ...


class CheckStatus(enum.StrEnum):
    POSTED = "posted"
    SUPERSEDED = "superseded"
    GROUP_ENDED = "group-ended"  # a merge group destroyed before its verdict: none posted
    NOT_CONFIGURED = "not-configured"
    FAILED = "failed"  # the check could not be completed, and the forge was told so
    UNPOSTED = "not-posted"  # nor could the forge be told: nothing was posted


@dataclass(frozen=True, slots=True)
class CheckResult:
    status: CheckStatus
    conclusion: str | None = None
    title: str | None = None
    new_issues: int = 0
    existing_issues: int = 0
    check_id: str | None = None
    seconds: float = 0.0
    # UNPOSTED: what kept the failure from being posted (the job tells why from its kind).
    unposted: ForgeError | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "status": str(self.status),
            "conclusion": self.conclusion,
            "title": self.title,
            "new_issues": self.new_issues,
            "existing_issues": self.existing_issues,
            "check_id": self.check_id,
            "seconds": round(self.seconds, 3),
        }


@dataclass(slots=True)
class CheckServices:
    forge: ForgeAdapter
    open_tree: Callable[[RepoRef], AbstractContextManager[TreeSource]]
    heads: HeadReader | None = None
    cache: FactsCache | None = None
    registries: RegistryCache | None = None
    # The gate's reports on revisions checked lately: a base gated once serves every pull
    # request on it. None: every revision is gated each time.
    reports: ReportCache | None = None
    summary_comment: bool = False
    details_url: str | None = None
    line_comments: bool = True
    line_comment_limit: int = 30
    # Whether work that can wait may spend the repository's rate limit now (line comments step
    # aside while it runs low: the summary lists every finding). None: always.
    can_wait: Callable[[RepoRef], bool] | None = None
    memory: LineCommentMemory | None = None
    history: CheckHistory | None = None
    # Approvals of strict targets' new objects; without a store they are read from the forge.
    approvals: ApprovalStore | None = None
    # What each published check showed waiting, and when: what an /approve may cover.
    shown: ShownChecks | None = None
    # The job ran before (a retry, or its worker died): reuse the check it started.
    resume: bool = False
    clock: Callable[[], float] = field(default=time.monotonic)
    wall_clock: Callable[[], datetime] = field(default=utc_now)
    # What the request needs from the forge before it can run (a re-requested check's pull
    # request): inside the check, so a failure there still ends in a check that says why.
    resolve: Callable[[CheckRequest], CheckRequest] | None = None


def _superseded(request: CheckRequest, heads: HeadReader | None) -> bool:
    """Whether the result is no longer wanted: a newer head of the pull request came, or the
    merge group was destroyed."""
    if heads is None:
        return False
    if request.group is not None:
        return group_ended(heads, request.group.key)
    if request.pull is None:
        return False
    latest = heads.latest_head(request.pull)
    return latest is not None and latest != request.head_sha


def _not_wanted(request: CheckRequest, check_id: str | None = None) -> CheckResult:
    if request.group is not None:
        return CheckResult(CheckStatus.GROUP_ENDED, check_id=check_id)
    return CheckResult(CheckStatus.SUPERSEDED, check_id=check_id)


def run_check(request: CheckRequest, services: CheckServices) -> CheckResult:
    started = services.clock()
    if _superseded(request, services.heads):
        log.info(
            "%s %s: %s, not checked",
            request.repo.full_name,
            request.head_sha[:12],
            "its merge group ended" if request.group else "superseded by a newer head",
        )
        return _not_wanted(request)
    forge = services.forge
    check: CheckHandle | None = None
    try:
        if services.resolve is not None:
            request = services.resolve(request)
        credentials = forge.git_credentials(request.repo)
        with services.open_tree(request.repo) as tree:
            config, request = read_config(tree, credentials, request)
            if not config.present:
                log.info("%s: no %s, staying silent", request.repo.full_name, CONFIG_FILE)
                return CheckResult(CheckStatus.NOT_CONFIGURED)
            if _superseded(request, services.heads):
                return _not_wanted(request)
            check = forge.start_check(
                request.repo,
                request.head_sha,
                external_id=request.external_id,
                resume=services.resume,
            )
            comparison, strict = compare_revisions(tree, credentials, request, config, services)
            lines = _line_comments(services, request.repo)
            touched_lines = _touched_lines(tree, comparison, lines)
        comparison = _approved(comparison, strict, request, forge, services.approvals)
        if _superseded(request, services.heads):
            # Started but no longer wanted: end it without a verdict rather than leave it
            # running; a newer head gets its own check, an ended merge group none.
            forge.complete_check(request.repo, check, _superseded_output(request))
            return _not_wanted(request, check.id)
        publication = Publication(
            request.repo,
            check,
            request.number,
            request.pull,
            comparison.base_sha,
            services.summary_comment,
            lines,
            services.line_comment_limit,
            services.details_url,
        )
        output = publish(forge, publication, comparison, touched_lines, services.memory)
        _keep(services.history, forge, request, output, check_facts(request, comparison))
        remember_shown(services.shown, services.wall_clock(), request, comparison)
    except Exception as exc:
        reason = _reason(exc)
        log.error(
            "check of %s at %s could not be completed: %s",
            request.repo.full_name,
            request.head_sha[:12],
            reason,
        )
        unposted = report_failure(
            forge, request, check, reason, services.history, resume=services.resume
        )
        if isinstance(exc, TransientForgeError) or not isinstance(exc, IchorError):
            raise  # the queue retries transient failures; a bug should show as a failed job
        if unposted is not None:
            return CheckResult(CheckStatus.UNPOSTED, None, reason, unposted=unposted)
        return CheckResult(CheckStatus.FAILED, Conclusion.ERROR.value, reason)
    return CheckResult(
        CheckStatus.POSTED,
        output.conclusion.value,
        output.title,
        comparison.new_issue_count,
        comparison.existing_issue_count,
        check.id,
        services.clock() - started,
    )


def _line_comments(services: CheckServices, repo: RepoRef) -> bool:
    """Whether this check syncs line comments: asked for, and the rate budget allows it."""
    if not services.line_comments:
        return False
    if services.can_wait is not None and not services.can_wait(repo):
        log.info("%s: the rate limit runs low, line comments wait", repo.full_name)
        return False
    return True


# Line comments need a diff per modified file: bounded, so a large change stays fast.
_MAX_DIFFED_FILES = 200


def _touched_lines(tree: TreeSource, comparison: CheckComparison, wanted: bool) -> TouchedLines:
    """Touched lines of the changed files that carry a new issue (what line comments need):
    an added file is touched everywhere (one git process for all of them); a modified one
    is diffed on its own."""
    if not wanted or comparison.base_sha is None:
        return {}
    base, head = comparison.base_sha, comparison.head_sha
    paths = {i.path for t in comparison.targets for i in t.new_issues} & comparison.changed_paths
    if not paths:
        return {}
    repository = tree.repository()
    added = set(repository.changed_paths(base, head, added_only=True)) & paths
    modified = sorted(paths - added)[:_MAX_DIFFED_FILES]
    touched: dict[str, frozenset[int] | None] = dict.fromkeys(added)
    touched.update((p, repository.touched_lines(base, head, p)) for p in modified)
    return touched


def _reason(exc: BaseException) -> str:
    if isinstance(exc, IchorError):
        return str(exc)
    return f"internal error ({type(exc).__name__}); the bot's log has the details"


def report_failure(
    forge: ForgeAdapter,
    request: CheckRequest,
    check: CheckHandle | None,
    reason: str,
    history: CheckHistory | None = None,
    *,
    resume: bool,
) -> ForgeError | None:
    """Best effort: a check that cannot be completed says so on the forge; ``resume`` as for
    :class:`CheckServices`. Returns what kept it from saying so, or None once it has."""
    output = error_output(reason, head_sha=request.head_sha)
    try:
        if check is None:
            check = forge.start_check(
                request.repo,
                request.head_sha,
                external_id=request.external_id,
                resume=resume,
            )
        forge.complete_check(request.repo, check, output)
    except ForgeError as exc:
        log.error(
            "the failure of %s at %s could not be posted either: %s",
            request.repo.full_name,
            request.head_sha[:12],
            exc,
        )
        return exc
    _keep(history, forge, request, output)
    return None


def _keep(
    history: CheckHistory | None,
    forge: ForgeAdapter,
    request: CheckRequest,
    output: CheckOutput,
    facts: CheckFacts | None = None,
) -> None:
    """What was posted, for the status page; ``facts`` when the check ran (a failure has
    none but its branch)."""
    if history is not None:
        history.record(
            forge.name,
            request.repo,
            request.number,
            request.external_id,
            request.head_sha,
            output,
            facts=facts or CheckFacts(branch=request.branch),
        )


def _approved(
    comparison: CheckComparison,
    strict: StrictObjects,
    request: CheckRequest,
    forge: ForgeAdapter,
    store: ApprovalStore | None,
) -> CheckComparison:
    """The approval status: a pull request's own approvals, or a merge group's pull requests'."""
    if request.group is not None:
        return with_group_approvals(comparison, strict, request.repo, request.group, forge, store)
    return with_approvals(comparison, strict, request, forge, store)


def _superseded_output(request: CheckRequest) -> CheckOutput:
    head = request.head_sha[:12]
    if request.group is not None:
        return CheckOutput(
            Conclusion.NEUTRAL,
            "Merge group ended",
            f"The merge group at `{head}` left the merge queue before its check was done; "
            "no verdict is given for it.",
            "",
        )
    return CheckOutput(
        Conclusion.NEUTRAL,
        "Superseded by a newer push",
        f"Commit `{head}` is no longer the head of its pull request; "
        "the newest head has its own check.",
        "",
    )


def read_config(
    tree: TreeSource, credentials: GitCredentials | None, request: CheckRequest
) -> tuple[ConfigResult, CheckRequest]:
    """``.ichor.yaml`` from the base (a pull request cannot loosen its own gate), or from the
    pushed commit when there is no base; and the request with its base commit known."""
    want = [request.head_sha] + ([request.base_sha] if request.base_sha else [])
    tree.fetch(credentials, request.fetch_refs, want=want)
    baseline = request.baseline
    if isinstance(baseline, MergeBase) and baseline.sha is None and baseline.branch is not None:
        tip = tree.fetched_ref(f"refs/heads/{baseline.branch}")
        if tip is None:
            raise GitStoreError(f"the base branch {baseline.branch!r} could not be fetched")
        request = dataclasses.replace(request, baseline=MergeBase(tip, baseline.branch))
    return config_at(tree, credentials, request.base_sha or request.head_sha), request


def compare_revisions(
    tree: TreeSource,
    credentials: GitCredentials | None,
    request: CheckRequest,
    config: ConfigResult,
    services: CheckServices,
) -> tuple[CheckComparison, StrictObjects]:
    repository = tree.repository()
    head, base = request.head_sha, request.base_sha
    if base is not None and isinstance(request.baseline, MergeBase):
        base = repository.merge_base(base, head) or base
    elif isinstance(request.baseline, Rerun):
        base = repository.parent(head)
    changed = tree.changed_paths(base, head) if base is not None else None
    issues = list(config.issues)
    if changed is not None and CONFIG_FILE in changed:
        at_head = config_at(tree, credentials, head)
        issues += [
            ConfigIssue(i.kind, f"at the pull request's head: {i.message}", i.path)
            for i in at_head.issues
        ]
    if config.config is None:
        return CheckComparison(head, base, (), config_issues=tuple(issues)), StrictObjects()
    policy = config.config.gate_policy()
    touched = touched_targets(policy, changed)
    narrowed = GatePolicy(touched, policy.max_yaml_bytes)
    paths = [CONFIG_FILE, *(t.path for t in touched)]
    paths += [t.capabilities for t in touched if t.capabilities]
    repo = request.repo
    head_report = _gate(tree, credentials, repo, head, paths, narrowed, services)
    base_report = _gate(tree, credentials, repo, base, paths, narrowed, services) if base else None
    comparison = compare_reports(
        head_report,
        base_report,
        head_sha=head,
        base_sha=base,
        touched={t.name for t in touched},
        changed_paths=changed or (),
        enforce={t.name: t.enforce for t in touched},
        # A merge base means a change into a branch (a pull request, or a branch pushed as
        # its pull request would be): what enforce: new weighs. A push's own check does not.
        pull_request=isinstance(request.baseline, MergeBase),
    )
    untouched = tuple(t.name for t in policy.targets if t not in touched)
    allow = config.config.commands.allow_author_approval
    return dataclasses.replace(
        comparison, untouched=untouched, config_issues=tuple(issues)
    ), strict_objects(narrowed, head_report, base_report, allow_author_approval=allow)


def _gate(
    tree: TreeSource,
    credentials: GitCredentials | None,
    repo: RepoRef,
    rev: str,
    paths: list[str],
    policy: GatePolicy,
    services: CheckServices,
) -> Report:
    """The gate's report on ``rev`` of ``repo``, or the one kept for them and ``policy``."""
    if not policy.targets:
        return Report(revision=rev)
    if services.reports is None:
        return _gate_now(tree, credentials, rev, paths, policy, services)
    return services.reports.get(
        report_key(repo, rev, policy),
        lambda: _gate_now(tree, credentials, rev, paths, policy, services),
    )


def _gate_now(
    tree: TreeSource,
    credentials: GitCredentials | None,
    rev: str,
    paths: list[str],
    policy: GatePolicy,
    services: CheckServices,
) -> Report:
    tree.prefetch_blobs(credentials, rev, paths)
    snapshot = tree.repository().snapshot(rev, paths)
    try:
        return run_gate(snapshot, policy, cache=services.cache, registries=services.registries)
    finally:
        snapshot.close()
