"""End to end on each forge (issue 20): two different objects never share a change branch or
pull request. ``ichor/<verb>-<namespace>-<name>`` alone would give ConfigMaps ``web-a/b`` and
``web/a-b`` one branch, and a Deployment and a Service of one name another: the second request
was answered with the first object's pull request and nothing was done for it. Now the first
keeps the readable name and the second, finding it held, takes its hashed one.

A comment → ``ichor-bot serve`` → Redis → a real worker → a real ``git push`` (through ``git
http-backend``) → a pull request on the fake forge; the same test on GitHub, GitLab and Gitea.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bot.commands.replies import plain
from tests.e2e.drivers import Forge
from tests.e2e.test_changes import CONFIG

WEB_A_B = "clusters/prod/v1/configmaps/web-a/b.yaml"
WEB_AB = "clusters/prod/v1/configmaps/web/a-b.yaml"
DEPLOYMENT = "clusters/prod/apps/v1/deployments/web/frontend.yaml"
SERVICE = "clusters/prod/v1/services/web/frontend.yaml"
OBJECTS: dict[str, str | None] = {
    WEB_A_B: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: web-a}\n"
    "data: {state: pending}\n",
    WEB_AB: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a-b, namespace: web}\n"
    "data: {state: pending}\n",
    DEPLOYMENT: "apiVersion: apps/v1\nkind: Deployment\n"
    "metadata: {name: frontend, namespace: web}\nspec: {replicas: 1}\n",
    SERVICE: "apiVersion: v1\nkind: Service\nmetadata: {name: frontend, namespace: web}\n"
    "spec: {ports: [{port: 80}]}\n",
}


@pytest.fixture
def forge(forge: Forge) -> Forge:
    """The repository of :data:`OBJECTS`, and a pull request the commands are written on."""
    forge.base(OBJECTS, config=CONFIG)
    forge.pull_request(forge.commit({"README.md": "changed\n"}), deliver=False)
    return forge


def pulls(forge: Forge) -> dict[str, str]:
    """The bot's open pull requests: head branch → URL."""
    return {p.head_ref: p.url for p in forge.bot_pulls()}


def changed(forge: Forge, branch: str) -> list[str]:
    """What ``branch`` changes on main: the paths, as ``git diff --name-only`` lists them."""
    return forge.git("diff", "--name-only", "main", branch).split()


def opened_for(forge: Forge, reply: str, verb: str) -> tuple[str, str]:
    """The branch and URL of the one pull request ``reply`` says it opened."""
    found = re.fullmatch(rf"Opened (\S+) for `/{verb}`\.", reply)
    assert found, reply
    (branch,) = [b for b, url in pulls(forge).items() if url == found[1]]
    return branch, found[1]


def test_configmaps_whose_names_join_alike_get_a_pull_request_each(forge: Forge) -> None:
    first = opened_for(forge, forge.ask("/ichor approve web-a/b"), "approve")
    second = opened_for(forge, forge.ask("/ichor approve web/a-b"), "approve")
    assert first != second and len(pulls(forge)) == 2
    # The first keeps the readable name; the second finds it held and ends in its own hash.
    assert first[0] == "ichor/approve-web-a-b"
    assert re.fullmatch(r"ichor/approve-web-a-b-[0-9a-f]{8}", second[0]), second
    assert changed(forge, first[0]) == [WEB_A_B]
    assert changed(forge, second[0]) == [WEB_AB]
    assert "state: approved" in forge.git("show", f"{second[0]}:{WEB_AB}")
    # The same object again: its own pull request, and nothing else.
    again = forge.ask("/ichor approve web/a-b")
    assert again.startswith(f"A pull request for this `/approve` is already open: {second[1]} ")
    assert len(pulls(forge)) == 2


def test_a_deployment_and_a_service_of_one_name_get_a_pull_request_each(forge: Forge) -> None:
    deployment = opened_for(forge, forge.ask("/ichor delete Deployment web/frontend"), "delete")
    service = opened_for(forge, forge.ask("/ichor delete Service web/frontend"), "delete")
    assert deployment != service and len(pulls(forge)) == 2
    assert (deployment[0], service[0]) == ("ichor/delete-web-frontend", SERVICE_BRANCH)
    assert changed(forge, deployment[0]) == [DEPLOYMENT]
    assert changed(forge, service[0]) == [SERVICE]
    # Naming the group too is the same object, so the same branch and pull request.
    again = forge.ask("/ichor delete Deployment.apps web/frontend")
    assert again.startswith(f"A pull request for this `/delete` is already open: {deployment[1]} ")
    assert len(pulls(forge)) == 2


def test_two_objects_asked_for_at_once_get_a_pull_request_each(
    forge: Forge, tmp_path: Path
) -> None:
    """Both requests queued, then two workers at once, each with a mirror of its own (as on
    two hosts): only the Redis lock is shared, and neither object's branch is the other's."""
    forge.comment("/ichor delete Deployment web/frontend")
    forge.comment("/ichor delete Service web/frontend")
    hosts = [tmp_path / f"host-{n}" for n in (1, 2)]
    for host in hosts:
        host.mkdir()
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda host: forge.run_worker(host / "data"), hosts))
    assert [run.code for run in runs] == [0, 0], [run.log[-2000:] for run in runs]
    replies = forge.replies()[-2:]
    opened = {opened_for(forge, reply, "delete") for reply in replies}
    assert len(opened) == 2 == len(pulls(forge))
    assert sorted(changed(forge, branch)[0] for branch, _ in opened) == [DEPLOYMENT, SERVICE]


DEPLOYMENT_MARKER = '<!-- ichor:change delete ["prod","apps","Deployment","web","frontend"] -->'
DEPLOYMENT_TRAILER = 'Ichor-Change: delete ["prod","apps","Deployment","web","frontend"]'
READABLE = "ichor/delete-web-frontend"
SERVICE_BRANCH = "ichor/delete-web-frontend-441692b2"  # the Service's hashed name (branch.py)
BODIES = [
    (
        f"{DEPLOYMENT_MARKER}\nDeletes Deployment web/frontend.",
        "it is for delete Deployment.apps web/frontend in prod",
    ),
    (
        "Someone rewrote this description.",
        "its description does not say which object it is for: was it edited?",
    ),
]


def ichor_branches(forge: Forge) -> dict[str, str]:
    listed = forge.git("for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/")
    return dict(line.split() for line in listed.splitlines() if line.startswith("ichor/"))


@pytest.mark.parametrize("body", [b for b, _ in BODIES], ids=["another-object", "edited"])
def test_a_readable_branch_held_by_another_pull_request_is_left_to_it(
    forge: Forge, body: str
) -> None:
    url = forge.plant(READABLE, body).url
    main = forge.git("rev-parse", "main")
    branch, _ = opened_for(forge, forge.ask("/ichor delete Service web/frontend"), "delete")
    assert branch == SERVICE_BRANCH and changed(forge, branch) == [SERVICE]
    # Not that pull request's URL as this object's, and its branch is where it was.
    assert pulls(forge)[READABLE] == url and ichor_branches(forge)[READABLE] == main


def test_a_readable_branch_whose_tip_is_another_change_is_left_to_it(forge: Forge) -> None:
    """Another object's change pushed, its pull request not open yet (it opens after the
    lock is let go): the commit's trailer says whose the branch is."""
    main = forge.git("rev-parse", "main")
    message = f"ichor: delete Deployment web/frontend\n\n{DEPLOYMENT_TRAILER}"
    theirs = forge.git("commit-tree", f"{main}^{{tree}}", "-p", main, "-m", message)
    forge.git("update-ref", f"refs/heads/{READABLE}", theirs)
    branch, _ = opened_for(forge, forge.ask("/ichor delete Service web/frontend"), "delete")
    assert branch == SERVICE_BRANCH
    assert ichor_branches(forge) == {
        READABLE: theirs,
        SERVICE_BRANCH: forge.git("rev-parse", SERVICE_BRANCH),
    }


@pytest.mark.parametrize(("body", "why"), BODIES, ids=["another-object", "edited"])
def test_a_pull_request_on_the_branch_that_is_not_this_objects_is_never_returned(
    forge: Forge, body: str, why: str
) -> None:
    """Both of the Service's names held by pull requests that are not its own: refused."""
    forge.plant(READABLE, body)
    url = forge.plant(SERVICE_BRANCH, body).url
    main = forge.git("rev-parse", "main")
    reply = forge.ask("/ichor delete Service web/frontend")
    refusal = (
        f"{url} is open on {SERVICE_BRANCH}, and it is not the pull request for delete "
        f"Service web/frontend in prod ({why}): nothing was pushed while it is open"
    )
    assert reply == f"`/delete` changed nothing: {plain(refusal)}."
    assert pulls(forge)[SERVICE_BRANCH] == url
    assert forge.pushes() == 0
    assert ichor_branches(forge) == {READABLE: main, SERVICE_BRANCH: main}
