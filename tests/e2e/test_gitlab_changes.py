"""End to end on GitLab, change merge requests (design.md 5, 6): a ``Note Hook`` → ``ichor-bot
serve`` → Redis → a real ``ichor-bot worker`` → a real ``git push`` (through ``git
http-backend``, which wants the token for pushes too) → a merge request on the fake GitLab,
exactly once, or a reply saying why not. The repository is
:class:`tests.e2e.gitlab_changes.ChangeScenario`'s; every test ends by searching everything
the bot wrote or ran for the token (:meth:`ChangeScenario.finish`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.changes.plan import BOOTSTRAP_IGNORE
from bot.state.redis_state import RedisAudit
from tests.e2e.gitlab_changes import CRD, ORIGINAL, SETTINGS, WIDGET, ChangeScenario
from tests.e2e.gitlab_commands import MAINTAINER, READER, forget_commands_state
from tests.e2e.harness import Bot, running_bot
from tests.fakeforge.gitlab import FakeGitLab

BRANCH = "ichor/approve-web-settings"  # readable: no other object holds it
HASHED = "ichor/approve-web-settings-00e2e604"  # its hashed name, looked up too
APPROVE = "/ichor approve web/settings mode=canary"  # GitLab runs its own /approve first
APPROVED = (
    ORIGINAL.replace("mode: prod", "mode: canary").replace("state: pending", "state: approved")
    + "  decision: approved by maintainer\n"
)
LEASE = f"--force-with-lease=refs/heads/{BRANCH}:"


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running_bot(tmp_path_factory.mktemp("bot")) as running:
        yield running
        forget_commands_state(running)


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeGitLab]:
    with FakeGitLab(tmp_path / "forge-git") as running:
        yield running


@pytest.fixture
def scenario(fake: FakeGitLab, bot: Bot, tmp_path: Path) -> Iterator[ChangeScenario]:
    running = ChangeScenario(fake, bot, tmp_path)
    yield running
    running.finish()


def leases(scenario: ChangeScenario) -> list[str]:
    """The ``--force-with-lease`` of every ``git push`` the worker ran."""
    argvs = scenario.runs[-1].git_argvs()
    return [a for argv in argvs if "push" in argv for a in argv if a.startswith("--force-with")]


def audited(scenario: ChangeScenario) -> list[tuple[str, str, str, str | None]]:
    """The repository's audit records, oldest first: actor, verb, result, PR URL."""
    records = RedisAudit(scenario.bot.redis).recent(repo=scenario.full_name)
    return [(r.actor, r.verb, r.result, r.pr_url) for r in reversed(records)]


def assert_approved_on(scenario: ChangeScenario, branch: str = BRANCH) -> None:
    """``branch`` holds the approval: one commit on main's tip, changing only its lines."""
    main = scenario.rev("main")
    assert main == scenario.base_sha
    assert scenario.rev(f"{branch}^") == main
    assert scenario.git("diff", "--name-only", main, branch).split() == [SETTINGS]
    assert scenario.git("show", f"{branch}:{SETTINGS}") == APPROVED


def test_approve_opens_one_merge_request_then_finds_it(scenario: ChangeScenario) -> None:
    scenario.open_mr(41)
    reply, _ = scenario.ask(41, APPROVE)
    api, mr41 = scenario.api, scenario.mr(41)
    assert scenario.fake.calls_summary() == [
        "GET /api/v4/user 200",
        f"GET {mr41} 200",
        f"POST {mr41}/notes/1/award_emoji 201",
        "GET /api/v4/users 200",
        f"GET {api}/members/all/{scenario.ids[MAINTAINER]} 200",
        f"GET {api}/merge_requests 200",  # the open one on the readable branch: none
        f"GET {api}/merge_requests 200",  # and on the hashed one: none
        f"POST {api}/merge_requests 201",
        f"POST {mr41}/notes 201",
    ]
    lookups = [c.query for c in scenario.fake.calls if c.route == "list_mrs"]
    assert lookups == [
        {"state": "opened", "source_branch": branch, "target_branch": "main"}
        for branch in (BRANCH, HASHED)
    ]
    assert scenario.branches() == [BRANCH] and scenario.pushes() == 1
    assert leases(scenario) == [LEASE]  # the branch must not exist yet
    assert_approved_on(scenario)
    message = scenario.git("log", "-1", "--format=%an <%ae>%n%B", BRANCH)
    note = f"{scenario.fake.url}/{scenario.full_name}/-/merge_requests/41#note_1"
    assert message == (
        "ichor-bot <ichor-bot@users.noreply.127.0.0.1>\n"
        "ichor: approve ConfigMap web/settings\n\n"
        "Marks ConfigMap web/settings as approved.\n\n"
        f"Requested-in: {note}\n"
        "Requested-by: maintainer\n"
        'Ichor-Change: approve ["prod","","ConfigMap","web","settings"]\n\n'
    )
    (mr,) = scenario.change_mrs()
    assert (mr["source_branch"], mr["target_branch"], mr["state"]) == (BRANCH, "main", "opened")
    assert mr["sha"] == scenario.rev(BRANCH)
    assert mr["title"] == "ichor: approve ConfigMap web/settings"
    assert mr["description"] == (
        '<!-- ichor:change approve ["prod","","ConfigMap","web","settings"] -->\n'
        "Marks ConfigMap web/settings as approved.\n\n"
        f"Requested by maintainer in [this comment]({note}).\n\n"
        "### Impact\n\n"
        "- **Target**: prod\n"
        "- **Objects**:\n"
        "  - ConfigMap web/settings\n"
        "- **Files**:\n"
        f"  - <code>{SETTINGS}</code>\n\n"
        "| field | before | after |\n"
        "| --- | --- | --- |\n"
        "| data.state | pending | approved |\n"
        "| data.mode | prod | canary |\n"
        "| data.decision | *(none)* | approved by maintainer |\n\n"
        "**The gate on the result**: accepted\n\n"
        "This branch belongs to Ichor Bot: a new identical request finds this pull request "
        "instead of opening another. Review and merge it as any change."
    )
    assert reply == f"Opened {mr['web_url']} for `/approve`."

    # The same request again: the same merge request named, nothing pushed or opened.
    tip = scenario.rev(BRANCH)
    again, _ = scenario.ask(41, APPROVE)
    assert again == (
        f"A pull request for this `/approve` is already open: {mr['web_url']} (nothing was pushed)."
    )
    assert scenario.pushes() == 1 and scenario.rev(BRANCH) == tip
    assert scenario.fake.calls_summary() == [
        "GET /api/v4/user 200",
        f"GET {mr41} 200",
        f"POST {mr41}/notes/3/award_emoji 201",
        f"GET {api}/merge_requests 200",  # found (the permission is cached)
        f"GET {api}/merge_requests/{mr['iid']} 200",  # a list item has no diff refs
        f"POST {mr41}/notes 201",
    ]
    assert [m["iid"] for m in scenario.change_mrs()] == [mr["iid"]]
    assert audited(scenario) == [
        ("maintainer", "approve", "pr-opened", mr["web_url"]),
        ("maintainer", "approve", "pr-existing", mr["web_url"]),
    ]


def test_a_leftover_branch_is_replaced_under_a_lease(scenario: ChangeScenario) -> None:
    scenario.open_mr(42)
    leftover = scenario.set_branch(BRANCH, {"README.md": "stale\n"}, scenario.base_sha)
    reply, _ = scenario.ask(42, APPROVE)
    assert leases(scenario) == [LEASE + leftover]  # the value just read
    assert scenario.pushes() == 1
    assert_approved_on(scenario)
    (mr,) = scenario.change_mrs()
    assert mr["source_branch"] == BRANCH and reply == f"Opened {mr['web_url']} for `/approve`."


def test_a_lost_answer_to_opening_the_merge_request_opens_one(scenario: ChangeScenario) -> None:
    scenario.open_mr(51)
    scenario.fake.inject("POST", rf"{scenario.api}/merge_requests", status=502, after=True)
    reply, _ = scenario.ask(51, APPROVE)
    (mr,) = scenario.change_mrs()
    opened = [c for c in scenario.fake.calls_summary() if "/merge_requests" in c and "/51" not in c]
    assert opened == [
        f"GET {scenario.api}/merge_requests 200",  # the readable branch's
        f"GET {scenario.api}/merge_requests 200",  # the hashed one's
        f"POST {scenario.api}/merge_requests 502",  # it was opened; the answer was lost
        f"POST {scenario.api}/merge_requests 409",
        f"GET {scenario.api}/merge_requests 200",
        f"GET {scenario.api}/merge_requests/{mr['iid']} 200",
    ]
    assert scenario.pushes() == 1
    assert reply == f"Opened {mr['web_url']} for `/approve`."


def test_a_push_that_loses_a_race_is_tried_again_once(scenario: ChangeScenario) -> None:
    scenario.open_mr(43)
    fake, name = scenario.fake, scenario.full_name
    fake.before_push(lambda: fake.set_branch(name, BRANCH, scenario.heads[43]))
    reply, run = scenario.ask(43, APPROVE)
    assert leases(scenario) == [LEASE, LEASE + scenario.heads[43]]
    assert scenario.pushes() == 2
    assert "trying again from a new fetch" in run.log
    assert_approved_on(scenario)
    (mr,) = scenario.change_mrs()
    assert reply == f"Opened {mr['web_url']} for `/approve`."


def test_a_branch_that_keeps_moving_is_an_error_and_no_merge_request(
    scenario: ChangeScenario,
) -> None:
    scenario.open_mr(44)
    fake, name = scenario.fake, scenario.full_name
    fake.before_push(lambda: fake.set_branch(name, BRANCH, scenario.heads[44]))
    fake.before_push(lambda: fake.set_branch(name, BRANCH, scenario.base_sha))
    reply, _ = scenario.ask(44, APPROVE)
    assert leases(scenario) == [LEASE, LEASE + scenario.heads[44]]
    assert scenario.pushes() == 2
    assert scenario.rev(BRANCH) == scenario.base_sha  # where the other writer left it
    assert scenario.change_mrs() == []
    assert reply.startswith(
        "`/approve` could not be completed; nothing was changed. The error:\n\n"
        "    the branch kept moving while it was pushed: "
        f"{BRANCH} moved on {scenario.fake.clone_url(name)} since it was read "
        f"(expected {scenario.heads[44]}): "
    ), reply


@pytest.mark.parametrize(("status", "attempts"), [(502, 5), (403, 1)])
def test_a_failed_lookup_of_the_open_merge_request_pushes_nothing(
    scenario: ChangeScenario, status: int, attempts: int
) -> None:
    scenario.open_mr(45)
    scenario.fake.inject("GET", rf"{scenario.api}/merge_requests", status=status, times=None)
    reply, _ = scenario.ask(45, APPROVE)
    lookups = [c for c in scenario.fake.calls_summary() if "/merge_requests " in c]
    assert lookups == [f"GET {scenario.api}/merge_requests {status}"] * attempts
    shown = f"{status} {'Bad Gateway' if status == 502 else 'Forbidden'}"
    assert reply == (
        "`/approve` could not be completed; nothing was changed. The error:\n\n"
        f"    GitLab GET {scenario.api}/merge_requests: {shown}: {shown}"
    )
    assert scenario.pushes() == 0 and scenario.branches() == []
    assert scenario.change_mrs() == []


def test_an_unauthorized_commenter_gets_one_reply_and_nothing_else(
    scenario: ChangeScenario,
) -> None:
    scenario.open_mr(46)
    reply, _ = scenario.ask(46, APPROVE, READER)
    assert reply == (
        "`/approve` was not run: it needs `write` permission on this repository, and @reader "
        "has `read`."
    )
    assert not any("/merge_requests " in c for c in scenario.fake.calls_summary())
    assert scenario.pushes() == 0 and scenario.branches() == [] and scenario.change_mrs() == []


def test_ignore_patterns_that_hide_managed_files_are_refused(scenario: ChangeScenario) -> None:
    scenario.open_mr(47, {"clusters/prod/notes.txt": "todo\n"})
    reply, _ = scenario.ask(47, "/ignore * in prod\n/ignore v1/ in prod")
    assert reply == (
        "`/ignore` changed nothing: '&#42;' would ignore every file of the target.\n\n---\n\n"
        "`/ignore` changed nothing: 'v1/' would shadow the managed file "
        f"'{SETTINGS}'."
    )
    assert scenario.pushes() == 0 and scenario.branches() == [] and scenario.change_mrs() == []


def test_ignore_on_a_same_project_merge_request_goes_into_its_branch(
    scenario: ChangeScenario,
) -> None:
    head = scenario.open_mr(48, {"clusters/prod/notes.txt": "todo\n"})
    reply, _ = scenario.ask(48, "/ignore notes.txt in prod")
    branch = "ichor/ignore-prod-pr48"
    (mr,) = scenario.change_mrs()
    assert (mr["source_branch"], mr["target_branch"]) == (branch, "feature")
    assert mr["title"] == "ichor: ignore notes.txt in prod"
    assert reply == f"Opened {mr['web_url']} for `/ignore`."
    ignore = "clusters/prod/.gittargetignore"
    assert scenario.rev(f"{branch}^") == head  # merging it fixes the merge request
    assert scenario.git("diff", "--name-status", head, branch).split() == ["A", ignore]
    assert scenario.git("show", f"{branch}:{ignore}") == BOOTSTRAP_IGNORE + "/notes.txt\n"
    assert BOOTSTRAP_IGNORE.startswith("# .gittargetignore")
    assert mr["description"].startswith(
        "<!-- ichor:change -->\n"
        "Ignores /notes.txt in target prod: creates it with the line in "
        f"<code>{ignore}</code>.\n\n"
    )
    assert mr["description"].count("| .gittargetignore | *(none)* | /notes.txt |") == 1
    assert "**The gate on the result**: accepted\n" in mr["description"]


def test_ignore_on_a_fork_merge_request_replies_with_the_line(scenario: ChangeScenario) -> None:
    scenario.open_mr(49, {"clusters/prod/notes.txt": "todo\n"}, fork=True)
    reply, _ = scenario.ask(49, "/ignore notes.txt in prod")
    assert reply == (
        "This pull request comes from a fork, so the bot cannot push to its branch. To ignore "
        "the file, add this line to the `.gittargetignore` of target `prod` in the pull "
        "request:\n\n    /notes.txt"
    )
    assert scenario.pushes() == 0 and scenario.branches() == [] and scenario.change_mrs() == []


def test_a_change_the_gate_would_refuse_is_not_pushed(scenario: ChangeScenario) -> None:
    scenario.open_mr(50)
    # Without its definition the Widget's type is served by no source: not followable.
    reply, _ = scenario.ask(50, "/delete CustomResourceDefinition _/widgets.example.com in prod")
    refusal = "the gate would refuse the result, with a new issue: not-followable in clusters/prod/"
    assert reply.startswith(f"`/delete` changed nothing: {refusal}"), reply
    ((actor, verb, result, url),) = audited(scenario)
    assert (actor, verb, url) == ("maintainer", "delete", None)
    assert result.startswith(f"refused: {refusal}"), result
    assert scenario.pushes() == 0 and scenario.branches() == [] and scenario.change_mrs() == []
    # The Widget itself may go: the result is accepted, and the file is removed.
    reply, _ = scenario.ask(50, "/delete Widget web/small in prod")
    (mr,) = scenario.change_mrs()
    branch = "ichor/delete-web-small"
    assert mr["source_branch"] == branch and mr["target_branch"] == "main"
    assert reply == f"Opened {mr['web_url']} for `/delete`."
    main = scenario.rev("main")
    assert scenario.git("diff", "--name-status", main, branch).split() == ["D", WIDGET]
    assert scenario.git("cat-file", "-t", f"{branch}:{CRD}") == "blob\n"
