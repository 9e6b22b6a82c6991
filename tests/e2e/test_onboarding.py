"""Onboarding end to end on every forge: a push to the default branch of a repository without
``.ichor.yaml`` → ``ichor-bot serve`` → Redis → a real worker → one onboarding pull request (a
merge request on GitLab) on ``ichor/bootstrap``, carrying the proposed files and the gate's
verdict per proposed target in its body; the next push finds it open and pushes nothing, and
the repository gets no check while it is not configured."""

from __future__ import annotations

import pytest

from tests.e2e.drivers import Files, Forge, Pull
from tests.support.gitops import configmap

BRANCH = "ichor/bootstrap"
BOOTSTRAP = ("README.md", ".gittargetignore")
# Two environments under clusters/ and a folder of apps, documentation, no .ichor.yaml.
UNCONFIGURED: dict[str, str | None] = {
    "clusters/prod/v1/configmaps/web/settings.yaml": configmap("settings"),
    "clusters/prod/v1/configmaps/web/other.yaml": configmap("other"),
    "clusters/staging/v1/configmaps/web/staged.yaml": configmap("staged"),
    "apps/web/deployment.yaml": configmap("web"),
    "apps/web/service.yaml": configmap("service"),
    "apps/api/settings.yaml": configmap("api"),
    "docs/guide.md": "how we deploy\n",
    "README.md": "hello\n",
}


def unconfigured(forge: Forge, extra: Files | None = None) -> None:
    """Main of :data:`UNCONFIGURED` (and ``extra``) on the forge; the local clone on main."""
    forge.local.commit({**UNCONFIGURED, **(extra or {})}, "base")
    forge.publish()


def push_to_main(forge: Forge, files: Files) -> str:
    """A commit of ``files`` pushed to main, its webhook delivered and worked on; main's tip."""
    before = forge.rev("main")
    after = forge.commit(files)
    forge.publish()
    forge.deliver_push(before, after)
    forge.work()
    return after


def proposals(forge: Forge) -> list[Pull]:
    return [p for p in forge.pulls() if p.head_ref == BRANCH]


@pytest.fixture
def forge(forge: Forge) -> Forge:
    unconfigured(forge)
    return forge


def test_a_push_to_the_default_branch_proposes_once(forge: Forge) -> None:
    head = push_to_main(forge, {"README.md": "changed\n"})
    opened = proposals(forge)
    assert len(opened) == 1, forge.runs[-1].log[-3000:]
    (pull,) = opened
    assert (pull.base_ref, pull.state, pull.author) == ("main", "open", forge.bot_name)
    assert pull.title == "ichor: guard this repository's GitTarget paths"
    # The gate's verdict per proposed target, in the body's table: prod and staging are
    # environments, each a target of its own; apps is one.
    body = pull.body
    assert "| target | path | verdict | objects found |" in body
    assert "| `clusters-prod` | <code>clusters/prod</code> | accepted | 2 of 2 doc" in body
    assert "| `clusters-staging` | <code>clusters/staging</code> | accepted | 1 of 1 doc" in body
    assert "| `apps` | <code>apps</code> | accepted | 3 of 3 doc" in body
    assert "**Open pull requests**: none into <code>main</code>" in body
    # Its branch is one commit on main with the proposed files.
    main = forge.rev("main")
    assert main == head and forge.rev(f"{BRANCH}^") == main and forge.rev(BRANCH) == pull.sha
    folders = ("clusters/prod", "clusters/staging", "apps")
    assert set(forge.git("diff", "--name-only", main, BRANCH).split()) == {
        ".ichor.yaml",
        *(f"{folder}/{name}" for folder in folders for name in BOOTSTRAP),
    }
    config = forge.git("show", f"{BRANCH}:.ichor.yaml")
    assert all(f"path: {folder}" in config for folder in folders), config
    assert forge.states(head) == []  # not configured: no check, no status

    # A second push: the open proposal is found, nothing is pushed or opened.
    pushes = forge.pushes()
    again = push_to_main(forge, {"README.md": "again\n"})
    assert proposals(forge) == [pull] and forge.pushes() == pushes
    assert forge.states(again) == []


@pytest.mark.parametrize("forge", ["gitlab", "gitea", "forgejo"], indirect=True)
def test_a_repository_created_under_an_organisation_hook_is_proposed_once(forge: Forge) -> None:
    """GitLab's system hook (``project_create``) or a Gitea/Forgejo organisation's webhook
    (``repository`` created) reaches a repository no hook of its own watches yet."""
    forge.deliver_repository_created()
    forge.work()
    opened = proposals(forge)
    assert len(opened) == 1, forge.runs[-1].log[-3000:]
    assert (opened[0].base_ref, opened[0].state) == ("main", "open")
    forge.deliver_repository_created()  # again (a redelivery): the open proposal is found
    forge.work()
    assert len(proposals(forge)) == 1
