"""Strict targets in the check (design.md 5.1): new objects wait for /approve until an approval
covers their exact fingerprints; approvals come from the store, or from the bot's comments."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.approvals.approval import Approval, Fingerprint
from bot.approvals.fingerprints import fingerprint_of
from bot.approvals.marker import approval_marker, cancel_marker
from bot.checks.output import APPROVE_ACTION, RECHECK_ACTION
from bot.checks.pipeline import CheckResult, CheckServices, run_check
from bot.checks.request import CheckRequest, Commit, MergeBase, pull_request
from bot.checks.trees import TreeSource, local_tree
from bot.errors import PermanentForgeError
from bot.forges.base import CheckOutput, Conclusion
from bot.forges.local import LocalForge
from bot.gate.content.facts import extract_facts
from bot.gate.run import RegistryCache
from bot.repos import ForgeKind, RepoRef
from bot.state.memory import MemoryApprovals
from tests.support.gitops import configmap
from tests.support.gitrepo import WorkRepo
from tests.support.recording_forge import RecordingForge

NAME = "acme/gitops"
PULL = f"github:{NAME}:7"
STRICT = """version: 1
targets:
  - {name: prod, path: clusters/prod, mode: strict}
  - {name: staging, path: clusters/staging}
"""
A = "clusters/prod/v1/configmaps/web/a.yaml"
B = "clusters/prod/v1/configmaps/web/b.yaml"


@pytest.fixture
def repo(tmp_path: Path) -> WorkRepo:
    return WorkRepo(tmp_path / NAME)


def base(repo: WorkRepo, config: str = STRICT) -> str:
    return repo.commit(
        {
            ".ichor.yaml": config,
            "clusters/prod/v1/configmaps/web/settings.yaml": configmap("settings"),
            "clusters/staging/v1/configmaps/web/settings.yaml": configmap("settings"),
        },
        "base",
    )


HANDLE = RepoRef(ForgeKind.GITHUB, NAME, clone_url=f"https://github.com/{NAME}.git")


def request(head: str, base_sha: str, author: str | None = "alice") -> CheckRequest:
    return pull_request(
        HANDLE,
        head,
        MergeBase(base_sha, "main"),
        7,
        forge=ForgeKind.GITHUB,
        external_id="d1",
        pull_head_ref=lambda n: f"refs/pull/{n}/head",
        author=author,
    )


def check(
    repo: WorkRepo,
    forge: LocalForge,
    req: CheckRequest,
    store: MemoryApprovals | None,
    *,
    summary_comment: bool = False,
) -> tuple[CheckResult, CheckOutput]:
    @contextlib.contextmanager
    def open_tree(handle: RepoRef) -> Iterator[TreeSource]:
        with local_tree(str(repo.path)) as tree:
            yield tree

    services = CheckServices(
        forge,
        open_tree,
        registries=RegistryCache(),
        approvals=store,
        summary_comment=summary_comment,
        line_comments=False,
    )
    result = run_check(req, services)
    assert isinstance(forge, RecordingForge)
    return result, forge.calls_of("complete_check")[-1][2]


def fingerprint(name: str, text: str) -> Fingerprint:
    ((_, obj),) = extract_facts(text.encode(), digests=True).objects
    return fingerprint_of(("", "ConfigMap", "web", name), obj.digest)


def approval(approver: str, *prints: Fingerprint, sha: str = "c" * 40) -> Approval:
    return Approval(approver, sha, frozenset(prints), "comment:1")


def test_two_new_objects_wait_for_approve(tmp_path: Path, repo: WorkRepo) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a"), B: configmap("b")})
    forge = RecordingForge(tmp_path / "data")
    result, output = check(repo, forge, request(head, start), MemoryApprovals())
    assert result.status == "posted" and result.conclusion == "action_required"
    assert output.conclusion is Conclusion.ACTION_REQUIRED
    assert output.title == "2 new objects in prod wait for /approve"
    assert output.actions == (APPROVE_ACTION, RECHECK_ACTION)
    assert "### Approvals" in output.summary
    for name, path in (("a", A), ("b", B)):
        assert f"<code>ConfigMap web/{name}</code> | <code>{path}</code> | ⏳ waiting" in (
            output.summary
        )


def test_an_approval_covering_both_passes_the_check(tmp_path: Path, repo: WorkRepo) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a"), B: configmap("b")})
    store = MemoryApprovals()
    store.record(
        PULL, approval("bob", fingerprint("a", configmap("a")), fingerprint("b", configmap("b")))
    )
    forge = RecordingForge(tmp_path / "data")
    result, output = check(repo, forge, request(head, start), store, summary_comment=True)
    assert result.conclusion == "success"
    assert output.actions == (RECHECK_ACTION,)
    assert output.summary.count("✅ approved by @&#8203;bob at <code>ccccccc</code>") == 2
    assert not forge.calls_of("list_comments")  # the store had a record: the forge is not asked
    comment = next((tmp_path / "data" / "local" / "comments").rglob("7.md")).read_text()
    assert "### Approvals" in comment and "All clear" not in comment
    assert "Every new object in a strict target is approved." in comment


def test_a_changed_object_waits_again_alone(tmp_path: Path, repo: WorkRepo) -> None:
    start = base(repo)
    repo.commit({A: configmap("a"), B: configmap("b")})
    changed = configmap("b").replace("mode: prod", "mode: debug")
    head = repo.commit({B: changed})
    store = MemoryApprovals()
    store.record(
        PULL, approval("bob", fingerprint("a", configmap("a")), fingerprint("b", configmap("b")))
    )
    result, output = check(repo, RecordingForge(tmp_path / "data"), request(head, start), store)
    assert result.conclusion == "action_required"
    assert output.title == "1 new object in prod waits for /approve"
    assert "<code>ConfigMap web/b</code> | <code>" + B + "</code> | ⏳ waiting" in output.summary
    assert "<code>ConfigMap web/a</code> | <code>" + A + "</code> | ✅ approved" in output.summary


def test_the_authors_own_approval_counts_only_when_allowed(tmp_path: Path, repo: WorkRepo) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a")})
    store = MemoryApprovals()
    store.record(PULL, approval("alice", fingerprint("a", configmap("a"))))
    result, _ = check(repo, RecordingForge(tmp_path / "data"), request(head, start), store)
    assert result.conclusion == "action_required"

    allowed = STRICT + "commands: {allow_author_approval: true}\n"
    start = repo.commit({".ichor.yaml": allowed, A: None}, "allow")
    head = repo.commit({A: configmap("a")})
    result, _ = check(repo, RecordingForge(tmp_path / "d2"), request(head, start), store)
    assert result.conclusion == "success"


def test_a_relaxed_target_never_waits(tmp_path: Path, repo: WorkRepo) -> None:
    start = base(repo)
    head = repo.commit({"clusters/staging/v1/configmaps/web/new.yaml": configmap("new")})
    forge = RecordingForge(tmp_path / "data")
    result, output = check(repo, forge, request(head, start), MemoryApprovals())
    assert result.conclusion == "success"
    assert "Approvals" not in output.summary and not forge.calls_of("list_comments")


def test_a_refusal_is_a_failure_even_with_objects_waiting(tmp_path: Path, repo: WorkRepo) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a"), "clusters/prod/notes.txt": "todo\n"})
    result, output = check(repo, RecordingForge(tmp_path / "data"), request(head, start), None)
    assert result.conclusion == "failure"
    assert output.actions == (RECHECK_ACTION,)
    assert "⏳ waiting for `/approve`" in output.summary


def test_a_push_has_no_approvals_to_wait_for(tmp_path: Path, repo: WorkRepo) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a")})
    push = CheckRequest(HANDLE, head, Commit(start), (), "d1")
    forge = RecordingForge(tmp_path / "data")
    result, _ = check(repo, forge, push, MemoryApprovals())
    assert result.conclusion == "success" and not forge.calls_of("list_comments")


def _post(forge: LocalForge, *bodies: str) -> None:
    for body in bodies:
        forge.post_comment(HANDLE, 7, body)


def test_approvals_lost_by_the_store_are_rebuilt_from_the_comments(
    tmp_path: Path, repo: WorkRepo
) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a"), B: configmap("b")})
    forge = RecordingForge(tmp_path / "data")
    both = approval("bob", fingerprint("a", configmap("a")), fingerprint("b", configmap("b")))
    only_a = approval("carol", fingerprint("a", configmap("a")))
    _post(
        forge,
        f"Approved.\n{approval_marker(only_a)}",
        f"Approved.\n{approval_marker(both)}",
        f"Withdrawn.\n{cancel_marker('carol', 'comment:3')}",
    )
    store = MemoryApprovals()
    result, _ = check(repo, forge, request(head, start), store)
    assert result.conclusion == "success" and len(forge.calls_of("list_comments")) == 1
    restored = store.approvals(PULL)
    assert restored is not None and [a.approver for a in restored] == ["bob"]
    # Restored, the next check reads the store and leaves the forge alone.
    check(repo, forge, request(head, start), store)
    assert len(forge.calls_of("list_comments")) == 1


def test_without_a_store_the_comments_are_read(tmp_path: Path, repo: WorkRepo) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a")})
    forge = RecordingForge(tmp_path / "data")
    _post(forge, approval_marker(approval("bob", fingerprint("a", configmap("a")))))
    result, _ = check(repo, forge, request(head, start), None)
    assert result.conclusion == "success"


def test_a_rebuild_that_fails_counts_as_no_approvals(tmp_path: Path, repo: WorkRepo) -> None:
    start = base(repo)
    head = repo.commit({A: configmap("a")})
    forge = RecordingForge(
        tmp_path / "data",
        failures={
            "list_comments": PermanentForgeError("listing comments is not available on local yet")
        },
    )
    store = MemoryApprovals()
    result, output = check(repo, forge, request(head, start), store)
    assert result.status == "posted" and result.conclusion == "action_required"
    assert output.title == "1 new object in prod waits for /approve"
    assert store.approvals(PULL) is None  # nothing learnt, so the next check tries again
