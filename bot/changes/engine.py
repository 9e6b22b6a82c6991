"""The change engine (design.md 6): one change request becomes, exactly once, a pull request on
the bot's own branch, or a reply saying why not.

Order, holding the repository's lock: the base branch is fetched and the change planned from
its tip, which gives the object's whole identity (only the base knows it: ``Deployment`` may
be ``Deployment.apps``) and so its two branch names (:mod:`bot.changes.branch`). Then the open
pull requests on them are looked up: one whose marker names this change is answered with its
URL, and nothing is built or pushed; the readable branch is taken when no other object holds
it, else the hashed one, where another change's open pull request is a refusal and nothing is
pushed; a failed lookup is an error, never "none". Then every written path is checked, the
gate run on the result (a change it would refuse is not pushed), the commit built in the
mirror with no checkout, and pushed once with a lease on the branch's value just read. A push
that lost a race is tried again once, from a new fetch. Then the pull request.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal

from bot.changes.branch import readable_branch
from bot.changes.marker import (
    change_trailer,
    not_this_change,
    object_marker,
    taken_branch,
    trailer_change,
)
from bot.changes.plan import (
    CreateChange,
    IgnoreChange,
    ObjectChange,
    Planned,
    Refused,
    plan_create,
    plan_ignore,
    plan_object,
)
from bot.changes.pr_body import MARKER, Impact, Requester, pr_body
from bot.changes.safety import written_path_problem
from bot.checks.compare import compare_reports
from bot.checks.report_cache import ReportCache, report_key
from bot.checks.tips import branch_tip, config_at
from bot.config.schema import IchorConfig
from bot.errors import GitStoreError, IchorError
from bot.forges.base import ForgeAdapter, GitCredentials, PullRequestRef
from bot.gate.codes import Severity
from bot.gate.content.cache import FactsCache
from bot.gate.content.identity import Identity
from bot.gate.policy import CONFIG_FILE, GatePolicy
from bot.gate.report import Report
from bot.gate.run import RegistryCache, run_gate
from bot.git.commit import GitIdentity, build_commit
from bot.git.overlay import overlay
from bot.git.push import PushRaceError, push_branch, remote_branch_head
from bot.git.snapshot import Snapshot
from bot.git.store import Mirror
from bot.ignore.rules import IGNORE_FILE, parse_ignore_file
from bot.paths import join
from bot.repos import RepoRef
from bot.state.locks import RepoLock, repo_lock_key

log = logging.getLogger("ichor.changes")
Result = Literal["pr-opened", "pr-existing", "refused", "error"]
LOCK_TTL = 600.0  # longer than any fetch-build-push; a killed worker's lock expires
LOCK_WAIT = 300.0


@dataclass(frozen=True, slots=True)
class ChangeRequest:
    repo: RepoRef
    forge: str
    change: ObjectChange | IgnoreChange | CreateChange
    base_branch: str  # where the pull request goes (the default branch, or a PR's head)
    requester: Requester
    # Where .ichor.yaml is read, when not the base branch: an /ignore into a pull request's
    # own branch still follows the default branch's rules (a pull request cannot loosen them).
    config_branch: str | None = None


@dataclass(frozen=True, slots=True)
class ChangeOutcome:
    result: Result
    pull_request_url: str | None = None
    branch: str | None = None
    reason: str | None = None

    @property
    def created(self) -> bool:
        return self.result == "pr-opened"


@dataclass(frozen=True, slots=True)
class ChangeServices:
    forge: ForgeAdapter
    open_mirror: Callable[[RepoRef], AbstractContextManager[Mirror]]
    lock: RepoLock
    author: GitIdentity
    cache: FactsCache | None = None
    registries: RegistryCache | None = None
    # The worker's reports: a change at the tip a check (or an earlier change) gated under the
    # same targets gates only its result.
    reports: ReportCache | None = None


@dataclass(frozen=True, slots=True)
class _Pushed:
    planned: Planned
    verdict: str


@dataclass(frozen=True, slots=True)
class _Open:
    """This change's pull request is open already: nothing was built or pushed."""

    branch: str
    pull: PullRequestRef


Lookup = Callable[[str], PullRequestRef | None]  # the open pull request from a branch


def open_change(request: ChangeRequest, services: ChangeServices) -> ChangeOutcome:
    """Raises ForgeErrors for the caller to report (and retry when transient)."""
    forge = services.forge
    credentials = forge.git_credentials(request.repo)

    def lookup(branch: str) -> PullRequestRef | None:
        return forge.find_pull_request(request.repo, branch, request.base_branch)

    done = _pushed_once_retried(request, services, credentials, lookup)
    if isinstance(done, Refused):
        return ChangeOutcome("refused", branch=done.branch, reason=done.reason)
    if isinstance(done, _Open):
        return ChangeOutcome("pr-existing", done.pull.url, done.branch)
    planned = done.planned
    impact = planned.impact or Impact(planned.target.name, (), tuple(planned.changes))
    body = pr_body(
        planned.summary,
        request.requester,
        Impact(impact.target, impact.objects, impact.paths, impact.fields, done.verdict),
        object_marker(*planned.marker) if planned.marker is not None else MARKER,
    )
    pull = forge.open_pull_request(
        request.repo, head=planned.branch, base=request.base_branch, title=planned.title, body=body
    )
    return ChangeOutcome("pr-opened", pull.url, planned.branch)


def _pushed_once_retried(
    request: ChangeRequest,
    services: ChangeServices,
    credentials: GitCredentials | None,
    lookup: Lookup,
) -> _Pushed | _Open | Refused:
    try:
        return _build_and_push(request, services, credentials, lookup)
    except PushRaceError as exc:
        log.warning("%s: %s; trying again from a new fetch", request.repo.full_name, exc)
    try:
        return _build_and_push(request, services, credentials, lookup)
    except PushRaceError as exc:
        raise GitStoreError(f"the branch kept moving while it was pushed: {exc}") from exc


def _config(mirror: Mirror, credentials: GitCredentials | None, tip: str) -> IchorConfig:
    result = config_at(mirror, credentials, tip)
    if result.config is None:
        why = "; ".join(i.message for i in result.issues[:3]) or "it is missing"
        raise IchorError(f".ichor.yaml on {tip[:12]} cannot be used: {why}")
    return result.config


def _build_and_push(
    request: ChangeRequest,
    services: ChangeServices,
    credentials: GitCredentials | None,
    lookup: Lookup,
) -> _Pushed | _Open | Refused:
    key = repo_lock_key(request.forge, request.repo.full_name)
    with (
        services.lock.hold(key, ttl=LOCK_TTL, wait=LOCK_WAIT),
        services.open_mirror(request.repo) as mirror,
    ):
        tip = branch_tip(mirror, credentials, request.base_branch)
        rules = request.config_branch
        rules_tip = branch_tip(mirror, credentials, rules) if rules is not None else tip
        config = _config(mirror, credentials, rules_tip)
        # Only the targets the change can act in are gated (the rest cannot hold its object),
        # and only what the gate reads is listed: in a blob-less mirror, a size fetches a blob.
        policy = _candidate_policy(config, request.change)
        paths = [CONFIG_FILE, *(t.path for t in policy.targets)]
        paths += [t.capabilities for t in policy.targets if t.capabilities]
        mirror.prefetch_blobs(credentials, tip, paths)
        snapshot = mirror.repository().snapshot(tip, paths)
        try:
            return _plan_check_push(
                request, services, credentials, mirror, snapshot, tip, config, policy, lookup
            )
        finally:
            snapshot.close()


def _candidate_policy(
    config: IchorConfig, change: ObjectChange | IgnoreChange | CreateChange
) -> GatePolicy:
    """The targets the change may act in: the one named, else every one (a /delete), the
    ones with ``approval`` (an /approve or /reject), the only one (an /ignore)."""
    policy = config.gate_policy()
    names = {t.name for t in config.targets}
    if change.target is not None:
        names = {change.target}
    elif isinstance(change, ObjectChange) and change.verb in ("approve", "reject"):
        names = {t.name for t in config.targets if t.approval is not None}
    kept = tuple(t for t in policy.targets if t.name in names)
    return GatePolicy(kept, policy.max_yaml_bytes)


def _plan_check_push(
    request: ChangeRequest,
    services: ChangeServices,
    credentials: GitCredentials | None,
    mirror: Mirror,
    snapshot: Snapshot,
    tip: str,
    config: IchorConfig,
    policy: GatePolicy,
    lookup: Lookup,
) -> _Pushed | _Open | Refused:
    def gate_base() -> Report:
        return _gate(snapshot, policy, services)

    reports = services.reports
    base = reports.get(report_key(request.repo, tip, policy), gate_base) if reports else gate_base()

    def read(path: str) -> bytes | None:
        entry = snapshot.get(path)
        return entry.read() if entry is not None else None

    change = request.change
    planned: Planned | Refused
    if isinstance(change, IgnoreChange):
        planned = plan_ignore(change, config, base, read)
    elif isinstance(change, CreateChange):
        planned = plan_create(change, config, base, read)
    else:
        planned = plan_object(change, config, base, read)
    if isinstance(planned, Refused):
        return planned
    chosen = _choose_branch(planned, lookup, mirror, credentials)
    if not isinstance(chosen, Planned):
        return chosen
    planned = chosen
    target = planned.target
    ignore_text = read(join(target.path, IGNORE_FILE) if target.path else IGNORE_FILE)
    matcher = (
        parse_ignore_file(ignore_text.decode("utf-8", "replace")).matcher if ignore_text else None
    )
    for path in planned.changes:
        shadowed = None if path.endswith("/" + IGNORE_FILE) or path == IGNORE_FILE else matcher
        problem = written_path_problem(path, target.path, shadowed)
        if problem is not None:
            return Refused(problem, planned.branch)
    narrowed = GatePolicy(
        tuple(t for t in policy.targets if t.name == target.name), policy.max_yaml_bytes
    )
    after = _gate(overlay(snapshot, planned.changes), narrowed, services)
    before = Report(
        base.revision, base.config_issues, tuple(t for t in base.targets if t.name == target.name)
    )
    compared = compare_reports(
        after,
        before,
        head_sha=tip,
        base_sha=tip,
        touched={target.name},
        changed_paths=tuple(planned.changes),
    )
    # Warnings (an ignore pattern nothing matches yet) never stop a change; errors do.
    new = [i for t in compared.targets for i in t.new_issues if i.severity is Severity.ERROR]
    if new:
        shown = "; ".join(f"{i.kind} in {i.path}" for i in new[:3])
        more = f" and {len(new) - 3} more" if len(new) > 3 else ""
        noun = "a new issue" if len(new) == 1 else f"{len(new)} new issues"
        why = f"the gate would refuse the result, with {noun}: {shown}{more}"
        return Refused(why, planned.branch)
    commit = build_commit(
        mirror,
        parent=tip,
        changes=planned.changes,
        message=_message(planned, request.requester),
        author=services.author,
    )
    expected = remote_branch_head(mirror, credentials, planned.branch)
    if expected is not None and _same_change(mirror, credentials, planned.branch, expected, commit):
        # Another worker pushed this very change while we waited for the lock: its pull
        # request is the one (open_pull_request finds it), and nothing is pushed again.
        log.info("%s: %s already holds this change", request.repo.full_name, planned.branch)
    else:
        push_branch(mirror, credentials, commit=commit, branch=planned.branch, expected=expected)
    verdict = (
        "accepted"
        if all(t.verdict == "accepted" for t in after.targets)
        else ("refused, as it already was at the base; the change adds no issue")
    )
    return _Pushed(planned, verdict)


def _choose_branch(
    planned: Planned, lookup: Lookup, mirror: Mirror, credentials: GitCredentials | None
) -> Planned | _Open | Refused:
    """The branch the change goes on (design.md 6), under the repository's lock: this
    object's open pull request on its readable or its hashed branch, if there is one; else the
    readable branch when no other object holds it; else the hashed one (refused while another
    change's pull request is open on it)."""
    # One branch: an /ignore's (its target and pull request), or an object whose readable
    # name cannot be written as it is. ``planned`` is on the object's hashed branch.
    marker = planned.marker
    readable = readable_branch(marker[0], marker[2]) if marker is not None else None
    if marker is None or readable is None:
        found = lookup(planned.branch)
        return planned if found is None else _open_for(planned, found)
    on_readable = lookup(readable)
    if on_readable is not None and not_this_change(on_readable.body, *marker) is None:
        return _Open(readable, on_readable)
    on_hashed = lookup(planned.branch)  # held before by another object, perhaps
    if on_hashed is not None and not_this_change(on_hashed.body, *marker) is None:
        return _Open(planned.branch, on_hashed)
    if on_readable is None and _free_for(mirror, credentials, readable, marker):
        return dataclasses.replace(planned, branch=readable)
    return planned if on_hashed is None else _open_for(planned, on_hashed)


def _free_for(
    mirror: Mirror,
    credentials: GitCredentials | None,
    branch: str,
    marker: tuple[str, str, Identity],
) -> bool:
    """Whether ``branch`` (with no open pull request) may take this change: it is not on the
    forge, or its tip is a leftover (design.md 6: replaced under a lease) whose trailer names
    this change or no change at all. A tip whose trailer names another change keeps the
    branch: that change's pull request is opened after its push, outside the lock, so the
    branch may be on its way to being that pull request's."""
    there = remote_branch_head(mirror, credentials, branch)
    if there is None:
        return True
    mirror.fetch(credentials, [f"refs/heads/{branch}"], want=[there])
    try:
        message = mirror.git(["log", "-1", "--format=%B", there]).decode("utf-8", "replace")
    except GitStoreError:
        return False
    verb, target, identity = marker
    return trailer_change(message) in (None, (verb, (target, identity)))


def _open_for(planned: Planned, pull: PullRequestRef) -> _Open | Refused:
    """``pull``, open on the change's branch, when it is this change's: an object's only when
    its marker names this verb and object (:mod:`bot.changes.marker`)."""
    if planned.marker is None:  # an /ignore's branch names its target and pull request alone
        return _Open(planned.branch, pull)
    why = not_this_change(pull.body, *planned.marker)
    if why is None:
        return _Open(planned.branch, pull)
    return Refused(taken_branch(pull.url, planned.branch, *planned.marker, why), planned.branch)


def _same_change(
    mirror: Mirror, credentials: GitCredentials | None, branch: str, there: str, ours: str
) -> bool:
    """Whether the branch's commit ``there`` is ours but for its dates: same tree, same parent."""
    mirror.fetch(credentials, [f"refs/heads/{branch}"], want=[there])

    def of(rev: str) -> str:
        return mirror.git(["rev-parse", "--verify", rev]).decode().strip()

    try:
        return of(f"{there}^{{tree}}") == of(f"{ours}^{{tree}}") and of(f"{there}^") == of(
            f"{ours}^"
        )
    except GitStoreError:  # a root commit, or not there after all: not ours
        return False


def _message(planned: Planned, requester: Requester) -> str:
    """The title, the summary, and who asked as a trailer (the bot is the author)."""
    asked = requester.login
    if requester.via_api:
        client = requester.client
        asked += f" (change API: {client})" if client and client != asked else " (change API)"
    lines = [planned.title, "", planned.summary, ""]
    if requester.link:
        lines.append(f"Requested-in: {requester.link}")
    lines.append(f"Requested-by: {' '.join(asked.split())}")
    if planned.marker is not None:  # whose the branch is, before its pull request is open
        lines.append(change_trailer(*planned.marker))
    return "\n".join(lines)


def _gate(snapshot: Snapshot, policy: GatePolicy, services: ChangeServices) -> Report:
    return run_gate(snapshot, policy, cache=services.cache, registries=services.registries)
