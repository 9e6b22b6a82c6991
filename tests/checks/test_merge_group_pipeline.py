"""A merge group's check (design.md 4, 5.1): its head against the queue's base, the approvals of
its pull requests carried over for unchanged objects, no button, and no verdict once the group
is destroyed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.checks.pipeline import CheckResult, CheckServices, CheckStatus, run_check
from bot.checks.request import CheckRequest, MergeBase, request_for
from bot.checks.trees import TreeSource, local_tree
from bot.errors import PermanentForgeError
from bot.forges.base import CheckHandle, CheckOutput, Conclusion, PullRequestRef
from bot.gate.run import RegistryCache
from bot.repos import RepoRef
from bot.state.base import GROUP_ENDED, merge_group_key
from bot.state.memory import MemoryApprovals, MemoryHeads
from bot.webhooks import MergeGroupEvent
from tests.checks.test_approvals_pipeline import (
    HANDLE,
    NAME,
    STRICT,
    A,
    B,
    approval,
    base,
    fingerprint,
)
from tests.support.gitops import configmap
from tests.support.gitrepo import WorkRepo
from tests.support.recording_forge import RecordingForge

AUTHORS = {7: "alice", 8: "carol"}


class Forge(RecordingForge):
    """The pull requests' authors by number; and, when ``ends`` is given, the group destroyed
    the moment its check run starts."""

    ends: MemoryHeads | None = None

    def get_pull_request(self, repo: RepoRef, number: int) -> PullRequestRef:
        self.calls.append(("get_pull_request", (repo, number), {}))
        if number not in AUTHORS:
            raise PermanentForgeError(f"no pull request {number}")
        return PullRequestRef(number, f"https://forge.test/{number}", author=AUTHORS[number])

    def start_check(self, repo: RepoRef, head_sha: str, **kwargs: Any) -> CheckHandle:
        handle = super().start_check(repo, head_sha, **kwargs)
        if self.ends is not None:
            self.ends.record_head(group_key(head_sha), GROUP_ENDED, redelivery=False)
        return handle


@pytest.fixture
def repo(tmp_path: Path) -> WorkRepo:
    return WorkRepo(tmp_path / NAME)


def group_key(head: str) -> str:
    return merge_group_key("github", NAME, head)


def group_request(head: str, base_sha: str, pulls: tuple[int, ...] = (7,)) -> CheckRequest:
    event = MergeGroupEvent(
        HANDLE,
        "checks_requested",
        head,
        f"refs/heads/gh-readonly-queue/main/pr-{pulls[0] if pulls else 1}-{base_sha}",
        "main",
        base_sha,
        pulls,
        42,
    )
    made = request_for(event, forge="github", delivery_id="d1", pull_head_ref=str)
    assert made is not None
    return made


def check(
    repo: WorkRepo,
    forge: Forge,
    req: CheckRequest,
    store: MemoryApprovals | None = None,
    heads: MemoryHeads | None = None,
    *,
    allow_author: bool = False,
) -> tuple[CheckResult, CheckOutput | None]:
    @contextlib.contextmanager
    def open_tree(handle: RepoRef) -> Iterator[TreeSource]:
        with local_tree(str(repo.path)) as tree:
            yield tree

    services = CheckServices(
        forge,
        open_tree,
        heads=heads,
        registries=RegistryCache(),
        approvals=store,
        line_comments=False,
    )
    result = run_check(req, services)
    completed = forge.calls_of("complete_check")
    return result, completed[-1][2] if completed else None


def test_the_request_compares_the_head_with_the_queues_base() -> None:
    req = group_request("a" * 40, "b" * 40, (7, 8))
    assert req.baseline == MergeBase("b" * 40, "main")
    assert req.fetch_refs == (
        f"refs/heads/gh-readonly-queue/main/pr-7-{'b' * 40}",
        "refs/heads/main",
    )
    assert req.group is not None and req.group.pulls == (7, 8)
    assert req.group.key == group_key("a" * 40)
    assert (req.pull, req.number) == (None, None)  # no pull request's state is touched


def test_two_pull_requests_accepted_alone_fail_together(tmp_path: Path, repo: WorkRepo) -> None:
    """Each adds the same ConfigMap in a file of its own: alone each is fine, in the group the
    object is defined twice."""
    start = base(repo, STRICT.replace("mode: strict", "mode: relaxed"))
    repo.commit({A: configmap("twin")})
    head = repo.commit({B: configmap("twin")})
    forge = Forge(tmp_path / "data")
    result, output = check(repo, forge, group_request(head, start, (7, 8)))
    assert output is not None and result.status is CheckStatus.POSTED
    assert output.conclusion is Conclusion.FAILURE
    assert output.title == "1 target refused · 1 new issue"
    assert "duplicate-identity" in output.text
    assert "This is a merge group of pull requests #7, #8" in output.summary
    assert output.actions == ()  # nobody approves a merge group, and buttons run on pulls


def test_approvals_on_the_queued_pull_requests_carry_over(tmp_path: Path, repo: WorkRepo) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a"), B: configmap("b")})
    store = MemoryApprovals()
    store.record(f"github:{NAME}:7", approval("bob", fingerprint("a", configmap("a"))))
    store.record(f"github:{NAME}:8", approval("bob", fingerprint("b", configmap("b"))))
    store.record(f"github:{NAME}:9", approval("bob", fingerprint("b", configmap("b"))))
    forge = Forge(tmp_path / "data")
    _, output = check(repo, forge, group_request(head, start, (7, 8)), store)
    assert output is not None
    assert output.conclusion is Conclusion.SUCCESS, output.title
    assert output.summary.count("✅ approved by @&#8203;bob") == 2
    # Only the queued pull requests are read.
    assert [c[1] for c in forge.calls_of("get_pull_request")] == [7, 8]


def test_an_object_changed_since_its_approval_fails_the_group(
    tmp_path: Path, repo: WorkRepo
) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a").replace("mode: prod", "mode: debug")})
    store = MemoryApprovals()
    store.record(f"github:{NAME}:7", approval("bob", fingerprint("a", configmap("a"))))
    forge = Forge(tmp_path / "data")
    result, output = check(repo, forge, group_request(head, start), store)
    assert output is not None and result.conclusion == "failure"
    assert output.conclusion is Conclusion.FAILURE  # never action_required: nobody can approve
    assert output.title == "1 new object in prod not approved on their pull requests"
    assert "❌ not approved" in output.summary and "queue it again" in output.summary
    assert output.actions == ()


def test_the_authors_own_approval_does_not_count_unless_allowed(
    tmp_path: Path, repo: WorkRepo
) -> None:
    own = approval("alice", fingerprint("a", configmap("a")))
    for config, expected in ((STRICT, Conclusion.FAILURE), (ALLOWED, Conclusion.SUCCESS)):
        work = WorkRepo(tmp_path / config[:7].strip() / str(expected))
        start = base(work, config)
        head = work.commit({A: configmap("a")})
        store = MemoryApprovals()
        store.record(f"github:{NAME}:7", own)
        forge = Forge(tmp_path / f"data-{expected}")
        _, output = check(work, forge, group_request(head, start), store)
        assert output is not None and output.conclusion is expected


ALLOWED = STRICT + "commands:\n  allow_author_approval: true\n"


def test_a_pull_request_that_cannot_be_read_lends_no_approval(
    tmp_path: Path, repo: WorkRepo
) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a")})
    store = MemoryApprovals()
    store.record(f"github:{NAME}:99", approval("bob", fingerprint("a", configmap("a"))))
    forge = Forge(tmp_path / "data")
    _, output = check(repo, forge, group_request(head, start, (99,)), store)
    assert output is not None and output.conclusion is Conclusion.FAILURE


def test_a_group_whose_branch_names_no_pull_request_carries_no_approval(
    tmp_path: Path, repo: WorkRepo
) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a")})
    forge = Forge(tmp_path / "data")
    _, output = check(repo, forge, group_request(head, start, ()), MemoryApprovals())
    assert output is not None and output.conclusion is Conclusion.FAILURE
    assert "names no pull request, so no approval carries over" in output.summary


def test_a_destroyed_group_gets_no_check_run(tmp_path: Path, repo: WorkRepo) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a")})
    heads = MemoryHeads()
    heads.record_head(group_key(head), GROUP_ENDED, redelivery=False)
    forge = Forge(tmp_path / "data")
    result, output = check(repo, forge, group_request(head, start), heads=heads)
    assert result.status is CheckStatus.GROUP_ENDED
    assert output is None and not forge.calls_of("start_check")


def test_a_group_destroyed_while_checked_ends_without_a_verdict(
    tmp_path: Path, repo: WorkRepo
) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a")})
    heads = MemoryHeads()
    forge = Forge(tmp_path / "data")
    forge.ends = heads
    result, output = check(repo, forge, group_request(head, start), heads=heads)
    assert result.status is CheckStatus.GROUP_ENDED
    assert output is not None
    assert (output.conclusion, output.title) == (Conclusion.NEUTRAL, "Merge group ended")
    # Another group's end, or a pull request's newer head, ends nothing here.
    assert heads.latest_head(group_key("c" * 40)) is None
