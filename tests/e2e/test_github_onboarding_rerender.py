"""End to end on GitHub (issue 22 item 4): the onboarding pull request says which open pull
requests the check would block today, and a push of an edited proposal to ``ichor/bootstrap``
rewrites its description with fresh verdicts, once per change, pushing nothing.

Real serve and worker processes; the behaviour is forge-neutral (the adapters list pull
requests and rewrite a description, each checked on its fake in tests/forges)."""

from __future__ import annotations

import pytest

from tests.e2e.drivers import GitHub
from tests.e2e.test_onboarding import BRANCH, proposals, push_to_main, unconfigured


@pytest.fixture
def github(github: GitHub) -> GitHub:
    """Two open pull requests into main: #7 adds a stray file to ``clusters/prod`` (the gate
    refuses it), #8 changes only the README (it touches no target)."""
    unconfigured(github)
    main = github.rev("main")
    for number, branch, files, title in [
        (7, "notes", {"clusters/prod/notes.txt": "todo\n"}, "Add notes"),
        (8, "docs", {"README.md": "better\n"}, "Docs"),
    ]:
        github.local.checkout(branch, create_from=main)
        head = github.local.commit(files, title)
        github.local.set_ref(f"refs/pull/{number}/head", head)
        github.fake.add_pull(
            github.full_name, number, head_sha=head, base_sha=main, head_ref=branch, title=title
        )
    github.local.checkout("main")
    github.publish()
    return github


def edit_proposal(github: GitHub, files: dict[str, str | None]) -> tuple[str, str]:
    """Commit ``files`` on ``ichor/bootstrap`` as a person would; (before, after)."""
    local = github.local
    local.git("fetch", "-q", str(github.bare), f"+refs/heads/{BRANCH}:refs/heads/{BRANCH}")
    before = local.git("rev-parse", BRANCH)
    local.checkout(BRANCH)
    after = local.commit(files, "edit the proposal")
    local.checkout("main")
    github.publish()
    return before, after


def push_to_proposal(github: GitHub, before: str, after: str) -> None:
    github.deliver_push(before, after, f"refs/heads/{BRANCH}")
    github.work()


def patches(github: GitHub, number: int) -> int:
    path = f"PATCH /repos/{github.full_name}/pulls/{number} "
    return sum(1 for call in github.calls() if call.startswith(path))


def test_the_open_pulls_are_judged_and_an_edit_re_renders_the_body(github: GitHub) -> None:
    push_to_main(github, {"README.md": "changed\n"})
    (pull,) = proposals(github)
    body = pull.body
    log = github.runs[-1].log[-3000:]
    assert "**Open pull requests** into <code>main</code>: 1 of the 2 checked" in body, log
    assert "- #&#8203;7 Add notes: touches `clusters-prod`, refused at its head (1 error)" in body
    assert "- 1 more touches no target, or only targets that accept them" in body
    assert "| `clusters-staging` |" in body

    # A person renames a target, drops the other and ignores the stray file #7 adds.
    pushes = github.pushes()
    config = "version: 1\ntargets:\n  - name: prod\n    path: clusters/prod\n"
    before, after = edit_proposal(
        github, {".ichor.yaml": config, "clusters/prod/.gittargetignore": "/notes.txt\n"}
    )
    push_to_proposal(github, before, after)
    assert patches(github, pull.number) == 1, github.runs[-1].log[-3000:]
    (edited,) = proposals(github)
    body = edited.body
    assert "| `prod` | <code>clusters/prod</code> | accepted | 2 of 2 documents |" in body
    assert "clusters-staging" not in body and "clusters-prod" not in body
    assert "**Open pull requests** into <code>main</code>: 0 of the 2 checked" in body
    assert github.pushes() == pushes  # nothing pushed: only the description changed
    assert github.check_runs() == []  # still unconfigured: silent

    # The same push again (a redelivery, or the bot's own push): nothing to rewrite.
    push_to_proposal(github, before, after)
    assert patches(github, pull.number) == 1
    # An edit that breaks the file is said, not hidden.
    before, after = edit_proposal(github, {".ichor.yaml": "version: 2\n"})
    push_to_proposal(github, before, after)
    (broken,) = proposals(github)
    assert "the `.ichor.yaml` on this branch cannot be read" in broken.body
