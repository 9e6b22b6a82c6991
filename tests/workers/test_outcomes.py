"""Every way a job can end without posting its result, and how it is kept (issue 20 item 6):
failed, with the reason and its kind, counted once it will not be tried again; and a job that
did post, even an error, kept as posted."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bot.errors import (
    ForgeStatusError,
    GitStoreError,
    PermanentForgeError,
    TransientForgeError,
)
from bot.forges.base import CheckOutput, Conclusion
from bot.forges.local import LocalForge
from bot.queueing.base import delivery_job_id
from bot.repos import ForgeKind, RepoRef
from bot.settings import Settings
from bot.state.base import GROUP_ENDED, merge_group_key
from bot.state.check_facts import CheckFacts, JobRun
from bot.state.history import CheckRecorder, FileHistory
from bot.state.memory import memory_state
from bot.state.outcomes import JobOutcome, OutcomeStore, Result, Unposted
from bot.webhooks import (
    ChangeRequestEvent,
    CommentEvent,
    InstallationEvent,
    MergeGroupEvent,
    event_to_dict,
)
from tests.support.gitops import base_files
from tests.support.gitrepo import WorkRepo
from tests.support.recording_forge import RecordingForge
from workers import outcomes as outcomes_module
from workers.context import Adapter, WorkerContext, build_context
from workers.jobs import abandon_delivery, run_delivery
from workers.outcomes import NotPostedError, PostWatch, run_watched, unposted_kind

NAME = "acme/gitops"
REPO = RepoRef(ForgeKind.GITHUB, NAME, "1", f"https://github.com/{NAME}.git", "", "main")


def Forge(
    data_dir: Path, fail: BaseException | None = None, refuse: BaseException | None = None
) -> RecordingForge:
    """The recording forge, failing where a test says: ``fail`` for the check's own first call
    to the forge, ``refuse`` for posting (starting a check run)."""
    failures = {"git_credentials": fail, "start_check": refuse}
    return RecordingForge(data_dir, failures={k: v for k, v in failures.items() if v is not None})


def _change(head: str = "a" * 40, base: str = "b" * 40) -> dict[str, Any]:
    event = ChangeRequestEvent(
        REPO, 7, "opened", head, "main", "feature", base, None, NAME, False, "alice", 1, False
    )
    return event_to_dict(event)


@pytest.fixture
def context(tmp_path: Path) -> WorkerContext:
    """GitHub without an App (as in the issue): the adapter cannot be built."""
    return build_context(Settings(data_dir=tmp_path / "data"), memory_state())


def _store(context: WorkerContext) -> OutcomeStore:
    assert context.outcomes is not None
    return context.outcomes


def _only(context: WorkerContext) -> JobOutcome:
    (outcome,) = _store(context).recent()
    return outcome


def _with_forge(
    context: WorkerContext, monkeypatch: pytest.MonkeyPatch, forge: LocalForge, tree: Path
) -> None:
    adapter = Adapter(forge, True, local_path=str(tree))
    monkeypatch.setattr(context, "adapter_for", lambda forge_name, full_name: adapter)


def _last_try(monkeypatch: pytest.MonkeyPatch, *, retries_left: int = 0) -> SimpleNamespace:
    """The RQ job being run, with ``retries_left`` tries after this one."""
    job = SimpleNamespace(retries_left=retries_left)
    job.should_retry = retries_left > 0
    monkeypatch.setattr(outcomes_module, "_current_job", lambda: job)
    return job


def test_no_credentials_fails_the_job_without_retries_saying_why(
    context: WorkerContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = _last_try(monkeypatch, retries_left=3)
    with pytest.raises(NotPostedError, match="the GitHub App id is not set"):
        run_delivery(context, "github", "d1", _change())
    assert job.retries_left == 0  # a retry cannot fix a setting: the queue fails it now
    outcome = _only(context)
    assert (outcome.job_id, outcome.result, outcome.kind) == ("github-d1", "not-posted", "settings")
    assert outcome.final and outcome.repository == NAME
    assert "ICHOR_GITHUB_APP_ID" in outcome.detail
    assert _store(context).unposted_counts() == {("github", "settings"): 1}


@pytest.mark.parametrize(
    ("refused", "kind"),
    [
        (
            ForgeStatusError("GitHub POST /app/installations/1/access_tokens: 404", status=404),
            "unresolved",
        ),
        (PermanentForgeError(f"{NAME}: no GitHub App installation id"), "unresolved"),
        (ForgeStatusError("GitHub POST /repos/acme/gitops/check-runs: 403", status=403), "refused"),
        (ForgeStatusError("GitHub: 422 No commit found for SHA", status=422), "refused"),
    ],
)
def test_a_permanent_failure_that_could_not_be_posted_either_is_not_mislabelled_failed(
    context: WorkerContext,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    refused: Exception,
    kind: str,
) -> None:
    forge = Forge(tmp_path / "data", fail=refused, refuse=refused)
    _with_forge(context, monkeypatch, forge, tmp_path)
    with pytest.raises(NotPostedError):
        run_delivery(context, "github", "d1", _change())
    outcome = _only(context)
    assert (outcome.result, outcome.kind, outcome.final) == ("not-posted", kind, True)
    assert outcome.detail == str(refused)
    assert _store(context).unposted_counts() == {("github", kind): 1}


def test_the_reason_names_the_failure_and_what_kept_it_off_the_forge(
    context: WorkerContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    refused = ForgeStatusError("GitHub POST /repos/acme/gitops/check-runs: 401", status=401)
    forge = Forge(tmp_path / "data", fail=GitStoreError("the fetch failed"), refuse=refused)
    _with_forge(context, monkeypatch, forge, tmp_path)
    with pytest.raises(NotPostedError):
        run_delivery(context, "github", "d1", _change())
    outcome = _only(context)
    assert outcome.kind == "refused"
    assert outcome.detail == f"the fetch failed; and posting that failed: {refused}"


def test_a_job_that_posted_an_error_check_is_posted_and_finishes(
    context: WorkerContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    forge = Forge(tmp_path / "data", fail=GitStoreError("the fetch failed"))
    _with_forge(context, monkeypatch, forge, tmp_path)
    summary = run_delivery(context, "github", "d1", _change())
    assert summary["check"]["status"] == "failed" and "not_posted" not in summary
    outcome = _only(context)
    assert (outcome.result, outcome.kind) == ("posted", "")
    assert outcome.detail.startswith("error: ")
    assert _store(context).unposted_counts() == {}


def test_an_unreachable_forge_is_kept_unposted_and_counted_only_on_the_last_try(
    context: WorkerContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    down = TransientForgeError("GitHub POST /app/installations/1/access_tokens: 503")
    _with_forge(context, monkeypatch, Forge(tmp_path / "data", fail=down, refuse=down), tmp_path)
    _last_try(monkeypatch, retries_left=2)
    with pytest.raises(TransientForgeError):  # left to the queue's retries, as before
        run_delivery(context, "github", "d1", _change())
    outcome = _only(context)
    assert (outcome.result, outcome.kind, outcome.final) == ("not-posted", "unreachable", False)
    assert _store(context).unposted_counts() == {}
    _last_try(monkeypatch, retries_left=0)
    with pytest.raises(TransientForgeError):
        run_delivery(context, "github", "d1", _change())
    assert _only(context).final
    assert _store(context).unposted_counts() == {("github", "unreachable"): 1}


def test_a_bug_whose_report_could_not_be_posted_is_an_error(
    context: WorkerContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    down = TransientForgeError("GitHub: 502")
    forge = Forge(tmp_path / "data", fail=KeyError("head"), refuse=down)
    _with_forge(context, monkeypatch, forge, tmp_path)
    with pytest.raises(KeyError):
        run_delivery(context, "github", "d1", _change())  # in process: no retry, final
    outcome = _only(context)
    assert (outcome.kind, outcome.final) == ("error", True)
    assert outcome.detail == "internal error (KeyError); the bot's log has the details"


def test_a_retry_that_posts_replaces_the_unposted_outcome(
    context: WorkerContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    down = TransientForgeError("GitHub: 503")
    forge = Forge(tmp_path / "data", fail=down, refuse=down)
    _with_forge(context, monkeypatch, forge, tmp_path)
    _last_try(monkeypatch, retries_left=1)
    with pytest.raises(TransientForgeError):
        run_delivery(context, "github", "d1", _change())
    forge.failures = {"git_credentials": GitStoreError("the fetch failed")}
    run_delivery(context, "github", "d1", _change())
    assert _only(context).result == "posted"
    assert _store(context).unposted_counts() == {}


def test_a_superseded_or_unconfigured_check_had_nothing_to_post(
    context: WorkerContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = WorkRepo(tmp_path / "repo")
    base = repo.commit({"README.md": "no configuration\n"}, "base")
    head = repo.commit({"a.txt": "a\n"})
    _with_forge(context, monkeypatch, Forge(tmp_path / "data"), repo.path)
    assert run_delivery(context, "github", "d1", _change(head, base))["silent"] == "not-configured"
    assert (_only(context).result, _only(context).detail) == ("silent", "not-configured")
    repo.commit(base_files(), "configured")
    context.state.heads.record_head(f"github:{NAME}:7", "f" * 40, redelivery=False)
    run_delivery(context, "github", "d2", _change(head, base))
    assert _store(context).outcomes(["github-d2"])["github-d2"].detail == "superseded"


def test_a_command_without_credentials_is_not_posted(context: WorkerContext) -> None:
    comment = CommentEvent(REPO, 7, True, "/recheck", "alice", "c1", 1, False)
    with pytest.raises(NotPostedError, match="the GitHub App id is not set"):
        run_delivery(context, "github", "d1", event_to_dict(comment))
    assert (_only(context).result, _only(context).kind) == ("not-posted", "settings")


def test_an_installation_without_credentials_is_not_posted(context: WorkerContext) -> None:
    installed = InstallationEvent("created", 1, "acme", (NAME,), ())
    with pytest.raises(NotPostedError):
        run_delivery(context, "github", "d1", event_to_dict(installed))
    assert (_only(context).kind, _only(context).repository) == ("settings", "-")


def test_an_abandoned_jobs_report_is_kept_under_the_abandoned_job(
    context: WorkerContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(NotPostedError):
        abandon_delivery(context, "github", "d1", _change())  # no credentials either
    assert (_only(context).job_id, _only(context).kind) == ("github-d1", "settings")
    down = TransientForgeError("GitHub: 503")
    _with_forge(context, monkeypatch, Forge(tmp_path / "data", refuse=down), tmp_path)
    with pytest.raises(NotPostedError, match="stopped before it finished"):
        abandon_delivery(context, "github", "d1", _change())
    assert _only(context).kind == "unreachable"
    _with_forge(context, monkeypatch, Forge(tmp_path / "data"), tmp_path)
    abandon_delivery(context, "github", "d1", _change())
    assert _only(context).result == "posted"


def test_an_abandoned_check_of_a_destroyed_merge_group_posts_nothing(
    context: WorkerContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    head, base = "a" * 40, "b" * 40
    ref = f"refs/heads/gh-readonly-queue/main/pr-7-{base}"
    event = event_to_dict(
        MergeGroupEvent(REPO, "checks_requested", head, ref, "main", base, (7,), 1)
    )
    forge = Forge(tmp_path / "data")
    _with_forge(context, monkeypatch, forge, tmp_path)
    context.state.heads.record_head(
        merge_group_key("github", NAME, head), GROUP_ENDED, redelivery=False
    )
    summary = abandon_delivery(context, "github", "d1", event)
    assert summary["silent"] == "group-ended"
    job = delivery_job_id("github", "d1", event)
    assert (_only(context).job_id, _only(context).result) == (job, "silent")


@pytest.mark.parametrize(
    ("summary", "kept"),
    [
        (
            {"handled": True, "results": ["recheck: done", "help: done"]},
            ("done", "recheck: done; help: done"),
        ),
        ({"handled": True, "result": "error", "reason": "no App id"}, ("done", "error: no App id")),
        ({"handled": True, "result": "pr-opened"}, ("done", "pr-opened")),
        ({"handled": False, "why": "written by a bot"}, ("silent", "written by a bot")),
        ({"handled": True, "silent": "superseded"}, ("silent", "superseded")),
    ],
)
def test_what_came_of_a_job_that_posts_no_check(
    context: WorkerContext, summary: dict[str, Any], kept: tuple[str, str]
) -> None:
    assert run_watched(context, "github", "d1", NAME, lambda watched: summary) is summary
    assert (_only(context).result, _only(context).detail) == kept


class _Broken:
    def add(self, outcome: JobOutcome) -> None:
        raise OSError("disk full")


def test_a_store_that_cannot_keep_the_outcome_does_not_change_the_job(
    context: WorkerContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(context, "outcomes", _Broken())
    forge = Forge(tmp_path / "data", fail=GitStoreError("the fetch failed"))
    _with_forge(context, monkeypatch, forge, tmp_path)
    assert run_delivery(context, "github", "d1", _change())["check"]["status"] == "failed"


def test_the_watch_passes_each_posted_check_on_to_the_history(tmp_path: Path) -> None:
    files = FileHistory(tmp_path)
    watch = PostWatch(CheckRecorder(files, clock=lambda: 1.0))
    output = CheckOutput(Conclusion.SUCCESS, "ok", "all good", "")
    watch.record("github", REPO, 7, "d1", "a" * 40, output)
    assert watch.posted is output
    assert [c.title for c in files.checks()] == ["ok"]


def test_a_check_is_filed_under_its_deliverys_forge_with_where_it_was_posted(
    tmp_path: Path,
) -> None:
    """``make run`` checks a GitHub delivery on the local forge: the page says both, truly."""
    files = FileHistory(tmp_path)
    watch = PostWatch(CheckRecorder(files, clock=lambda: 5.0), JobRun("github", "github-d1", 2.0))
    output = CheckOutput(Conclusion.FAILURE, "refused", "x", "")
    watch.record("local", REPO, 7, "d1", "a" * 40, output, facts=CheckFacts(branch="add-cache"))
    (entry,) = files.checks()
    assert (entry.forge, entry.posted_to, entry.job_id) == ("github", "local", "github-d1")
    assert (entry.started_at, entry.at) == (2.0, 5.0)
    assert entry.facts == CheckFacts(branch="add-cache")
    assert files.check(entry.id) == entry  # read back whole
    watch.record("github", REPO, 7, "d1", "a" * 40, output)
    assert files.check(entry.id) is not None and files.checks()[0].posted_to == ""


def test_the_kinds_of_failure() -> None:
    assert unposted_kind(ForgeStatusError("x", status=404)) is Unposted.UNRESOLVED
    assert unposted_kind(ForgeStatusError("x", status=410)) is Unposted.UNRESOLVED
    assert unposted_kind(ForgeStatusError("x", status=401)) is Unposted.REFUSED
    assert unposted_kind(TransientForgeError("x")) is Unposted.UNREACHABLE
    assert unposted_kind(PermanentForgeError("x")) is Unposted.UNRESOLVED
    assert unposted_kind(GitStoreError("x")) is Unposted.ERROR
    assert unposted_kind(RuntimeError("x")) is Unposted.ERROR
    assert {r.value for r in Result} == {"posted", "done", "silent", "not-posted"}


def test_a_wait_the_forge_named_stretches_the_next_retry(
    context: WorkerContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A rate limit resetting in 15 minutes is longer than the seam sleeps out: the job ends
    # with it, and the queue's next try must not come back before then.
    limited = TransientForgeError("GitHub: 403 rate limit exceeded", retry_after=900.2)
    _with_forge(context, monkeypatch, Forge(tmp_path / "data", fail=limited), tmp_path)
    job = _last_try(monkeypatch, retries_left=3)
    job.retry_intervals = [10, 60, 300, 1200]
    with pytest.raises(TransientForgeError):
        run_delivery(context, "github", "d1", _change())
    assert job.retry_intervals == [901, 901, 901, 1200]
