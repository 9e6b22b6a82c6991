"""Change commands end to end on every forge (design.md 5, 6): a comment's webhook → ``ichor-bot
serve`` → Redis → a real ``ichor-bot worker`` → a real ``git push`` (through ``git
http-backend`` behind the fake, which wants the token for every request) → a pull request (a
merge request on GitLab) on the fake forge, exactly once, or a reply saying why not and nothing
pushed. A leftover branch is replaced under a lease, a push that loses a race is tried again
once, a failing look-up of the open pull request pushes nothing.

The repository has an approval target (``prod``: ConfigMaps, ``data.state``), a
CustomResourceDefinition and one of its objects, and a relaxed ``staging`` target; pull request
7 (``alice``'s, from ``feature``) adds a foreign file to prod. Every test ends by searching
everything the bot wrote or ran for the token (:meth:`tests.e2e.drivers.Forge.finish`).
"""

from __future__ import annotations

import pytest

from bot.changes.plan import BOOTSTRAP_IGNORE
from tests.e2e.drivers import MAINTAINER, READER, Forge

CONFIG = """version: 1
targets:
  - name: prod
    path: clusters/prod
    approval: {kind: ConfigMap, field: data.state, reasonField: data.decision, fields: [data.mode]}
  - {name: staging, path: clusters/staging}
commands:
  min_permission: write
"""
SETTINGS = "clusters/prod/v1/configmaps/web/settings.yaml"
ORIGINAL = """# the web tier's settings
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings  # do not rename
  namespace: web
data:
  mode: prod
  state: pending
"""
APPROVED = (
    ORIGINAL.replace("mode: prod", "mode: canary").replace("state: pending", "state: approved")
    + f"  decision: approved by {MAINTAINER}\n"
)
# Widgets are followable only through the CRD in the target: deleting it refuses the Widget.
CRD = "clusters/prod/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com.yaml"
CRD_TEXT = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
"""
WIDGET = "clusters/prod/example.com/v1/widgets/web/w.yaml"
WIDGET_TEXT = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: web}\n"
BASE: dict[str, str | None] = {SETTINGS: ORIGINAL, CRD: CRD_TEXT, WIDGET: WIDGET_TEXT}
NOTES = {"clusters/prod/notes.txt": "todo\n"}
BRANCH = "ichor/approve-web-settings"  # readable: no other object holds it
HASHED = "ichor/approve-web-settings-00e2e604"  # its hashed name, looked up too
LEASE = f"--force-with-lease=refs/heads/{BRANCH}:"
ERROR = "could not be completed; nothing was changed. The error:\n\n    "
CHANGE = 'approve ["prod","","ConfigMap","web","settings"]'
IGNORE = "clusters/prod/.gittargetignore"
FROM_A_FORK = (
    "This pull request comes from a fork, so the bot cannot push to its branch. To ignore "
    "the file, add this line to the `.gittargetignore` of target `prod` in the pull "
    "request:\n\n    /notes.txt"
)


@pytest.fixture
def forge(forge: Forge) -> Forge:
    """The base on main, and pull request 7 of :data:`NOTES` (known to the forge, no check
    run yet)."""
    forge.base(BASE, config=CONFIG)
    forge.pull_request(forge.commit(NOTES), deliver=False)
    return forge


def approve(forge: Forge) -> str:
    """The maintainer's ``/approve`` of web/settings (GitLab runs its own ``/approve``)."""
    return f"{forge.APPROVE} web/settings mode=canary"


def approve_body(link: str) -> str:
    return f"""<!-- ichor:change {CHANGE} -->
Marks ConfigMap web/settings as approved.

Requested by {MAINTAINER} in [this comment]({link}).

### Impact

- **Target**: prod
- **Objects**:
  - ConfigMap web/settings
- **Files**:
  - <code>{SETTINGS}</code>

| field | before | after |
| --- | --- | --- |
| data.state | pending | approved |
| data.mode | prod | canary |
| data.decision | *(none)* | approved by {MAINTAINER} |

**The gate on the result**: accepted

This branch belongs to Ichor Bot: a new identical request finds this pull request instead of \
opening another. Review and merge it as any change."""


def assert_approved(forge: Forge, reply: str, lease: str) -> None:
    """One pull request of the bot, from :data:`BRANCH` into main and named in ``reply``: one
    commit on main's tip changing only the approval's lines, pushed with ``lease``."""
    (pull,) = forge.bot_pulls()
    assert (pull.head_ref, pull.base_ref) == (BRANCH, "main")
    assert reply == f"Opened {pull.url} for `/approve`."
    assert forge.branches() == {BRANCH: pull.sha} and forge.rev(BRANCH) == pull.sha
    assert forge.rev("main") == forge.base_sha
    assert forge.rev(f"{BRANCH}^") == forge.base_sha
    assert forge.git("diff", "--name-only", forge.base_sha, BRANCH).split() == [SETTINGS]
    assert forge.git("show", f"{BRANCH}:{SETTINGS}") + "\n" == APPROVED
    pushes = [argv for argv in forge.remote_argvs(forge.runs[-1]) if "push" in argv]
    assert pushes[-1][-3:] == [lease, "origin", f"{pull.sha}:refs/heads/{BRANCH}"]


def nothing_pushed(forge: Forge) -> None:
    assert forge.pushes() == 0 and forge.branches() == {} and forge.bot_pulls() == []
    assert [argv for argv in forge.runs[-1].git_argvs() if "push" in argv] == []


def test_approve_opens_one_pull_request_and_a_second_ask_finds_it(forge: Forge) -> None:
    comment = forge.command(approve(forge))
    (reply,) = forge.replies()
    api = forge.api
    assert forge.lookups() == [(BRANCH, "main"), (HASHED, "main")]  # none open on either
    assert forge.pushes() == 1 and forge.leases() == [LEASE]  # the branch must not exist yet
    assert_approved(forge, reply, LEASE)
    (pull,) = forge.bot_pulls()
    link = forge.url_of(comment)
    assert forge.calls() == [
        *api.command(comment),
        *api.permission(MAINTAINER),
        *api.lookup(BRANCH, found=False),
        *api.lookup(HASHED, found=False),
        *api.open_pull(),
        *api.reply(),
    ]
    assert (pull.author, pull.title) == (forge.bot_name, "ichor: approve ConfigMap web/settings")
    assert pull.body == approve_body(link)
    assert forge.git("log", "-1", "--format=%an <%ae>|%cn <%ce>|%B", BRANCH) == (
        f"{forge.identity}|{forge.identity}|"
        "ichor: approve ConfigMap web/settings\n\nMarks ConfigMap web/settings as approved.\n\n"
        f"Requested-in: {link}\nRequested-by: {MAINTAINER}\nIchor-Change: {CHANGE}"
    )
    remote = forge.remote_argvs(forge.runs[-1])

    # The same request again: the same pull request named, nothing pushed or opened.
    comment = forge.command(approve(forge))
    _, again = forge.replies()
    assert again == (
        f"A pull request for this `/approve` is already open: {pull.url} (nothing was pushed)."
    )
    assert forge.pushes() == 1 and forge.bot_pulls() == [pull]
    assert forge.remote_argvs(forge.runs[-1]) == remote  # no ls-remote, no push
    assert forge.calls() == [  # the permission is cached
        *api.command(comment),
        *api.lookup(BRANCH),
        *api.found(pull),
        *api.reply(),
    ]
    assert forge.audits() == [
        (MAINTAINER, "approve", "pr-opened", pull.url),
        (MAINTAINER, "approve", "pr-existing", pull.url),
    ]


def test_a_leftover_branch_without_a_pull_request_is_replaced_under_a_lease(
    forge: Forge,
) -> None:
    closed = forge.plant(BRANCH, "", sha=forge.head, state="closed")  # an old branch of the bot
    reply = forge.ask(approve(forge))
    assert forge.leases() == [LEASE + forge.head]  # the value just read
    assert forge.pushes() == 1
    assert_approved(forge, reply, LEASE + forge.head)
    (pull,) = forge.bot_pulls()
    assert pull.number != closed.number  # not the closed one
    if forge.route == "gitea":  # its look-up by base and head names the closed one: the open
        assert f"GET /api/v1/repos/{forge.full_name}/pulls 200" in forge.calls()  # are listed
    assert forge.audits() == [(MAINTAINER, "approve", "pr-opened", pull.url)]


def test_a_branch_moved_after_it_was_read_is_read_again_once(forge: Forge) -> None:
    held: list[bool] = []  # the repository's lock, seen from the forge during the push

    def move() -> None:
        held.append(forge.locked())
        forge.move(BRANCH, forge.head)

    forge.fake.before_push(move)
    reply = forge.ask(approve(forge))
    assert forge.pushes() == 2 and held == [True], forge.runs[-1].log[-3000:]
    assert "trying again from a new fetch" in forge.runs[-1].log
    assert forge.leases() == [LEASE, LEASE + forge.head]  # the second on what it read then
    assert_approved(forge, reply, LEASE + forge.head)


def test_a_branch_that_keeps_moving_is_an_error_and_no_pull_request(forge: Forge) -> None:
    for sha in (forge.head, forge.base_sha):
        forge.fake.before_push(lambda sha=sha: forge.move(BRANCH, sha))
    reply = forge.ask(approve(forge))
    assert forge.pushes() == 2
    assert forge.leases() == [LEASE, LEASE + forge.head]
    assert reply.startswith(
        f"`/approve` {ERROR}the branch kept moving while it was pushed: {BRANCH} moved on "
        f"{forge.fake.clone_url(forge.full_name)} since it was read (expected {forge.head}): "
    ), forge.runs[-1].log[-3000:]
    assert forge.bot_pulls() == []
    assert forge.branches() == {BRANCH: forge.base_sha}  # the other writer's commit is kept
    ((actor, verb, result, url),) = forge.audits()
    assert (actor, verb, result[:6], url) == (MAINTAINER, "approve", "error:", None)


@pytest.mark.parametrize(("status", "attempts"), [(503, 5), (403, 1)])
def test_a_failed_pull_request_lookup_is_an_error_and_nothing_is_pushed(
    forge: Forge, status: int, attempts: int
) -> None:
    forge.fail_pull_lookups(status)
    reply = forge.ask(approve(forge))
    assert reply == f"`/approve` {ERROR}{forge.api.lookup_error(BRANCH, status)}"
    assert forge.lookups() == [(BRANCH, "main")] * attempts
    assert forge.calls().count(*forge.api.lookup(BRANCH, status)) == attempts
    assert not any(c in forge.calls() for c in forge.api.open_pull())
    nothing_pushed(forge)
    assert forge.remote_argvs(forge.runs[-1]) == []


def test_an_unauthorized_commenter_gets_one_reply_and_nothing_else(forge: Forge) -> None:
    reply = forge.ask(approve(forge), user=READER)
    assert reply == (
        f"`/approve` was not run: it needs `write` permission on this repository, and @{READER} "
        "has `read`."
    )
    assert forge.lookups() == []
    nothing_pushed(forge)
    assert forge.remote_argvs(forge.runs[-1]) == []


def test_ignore_patterns_that_hide_managed_files_are_refused(forge: Forge) -> None:
    reply = forge.ask("/ignore * in prod\n/ignore v1/ in prod")
    assert reply == (
        "`/ignore` changed nothing: '&#42;' would ignore every file of the target.\n\n---\n\n"
        f"`/ignore` changed nothing: 'v1/' would shadow the managed file '{SETTINGS}'."
    )
    nothing_pushed(forge)
    assert forge.remote_argvs(forge.runs[-1]) == []


def test_a_delete_that_names_no_target_is_refused_when_several_hold_the_object(
    forge: Forge,
) -> None:
    reply = forge.ask("/delete ConfigMap web/settings")
    assert "several targets" in reply
    nothing_pushed(forge)


def test_ignore_on_a_same_repository_pull_request_goes_into_its_branch(forge: Forge) -> None:
    forge.pull_request(forge.head)
    forge.work()
    assert forge.verdict()[0] == forge.FAILED  # a foreign file
    comment = forge.command("/ignore notes.txt in prod")
    (reply,) = forge.replies()
    branch = f"ichor/ignore-prod-pr{forge.number}"
    (pull,) = forge.bot_pulls()
    assert (pull.head_ref, pull.base_ref) == (branch, "feature")
    assert pull.title == "ichor: ignore notes.txt in prod"
    assert reply == f"Opened {pull.url} for `/ignore`."
    assert forge.branches() == {branch: pull.sha}
    link = forge.url_of(comment)
    assert pull.body.startswith(
        "<!-- ichor:change -->\nIgnores /notes.txt in target prod: creates it with the line in "
        f"<code>{IGNORE}</code>.\n\n"
        f"Requested by {MAINTAINER} in [this comment]({link}).\n\n"
    )
    assert pull.body.count("| .gittargetignore | *(none)* | /notes.txt |") == 1
    assert "**The gate on the result**: accepted\n" in pull.body
    # Its parent is the pull request's head: merging it fixes the pull request.
    assert forge.rev(f"{branch}^") == forge.head
    assert forge.git("diff", "--name-status", forge.head, branch).split() == ["A", IGNORE]
    assert forge.git("show", f"{branch}:{IGNORE}") + "\n" == BOOTSTRAP_IGNORE + "/notes.txt\n"
    assert BOOTSTRAP_IGNORE.startswith("# .gittargetignore")
    # Found again by its head and the pull request's branch.
    again = forge.ask("/ignore notes.txt in prod")
    assert again.startswith(f"A pull request for this `/ignore` is already open: {pull.url} ")
    assert forge.pushes() == 1 and forge.bot_pulls() == [pull]


def test_ignore_on_a_fork_replies_with_the_line_to_add(forge: Forge) -> None:
    forge.pull_request(forge.head, number=8, fork=True, deliver=False)
    assert forge.ask("/ignore notes.txt in prod", number=8) == FROM_A_FORK
    assert forge.replies(8) == [FROM_A_FORK]
    nothing_pushed(forge)
    assert forge.remote_argvs(forge.runs[-1]) == []


def test_a_change_the_gate_would_refuse_is_not_pushed(forge: Forge) -> None:
    reply = forge.ask("/delete CustomResourceDefinition _/widgets.example.com in prod")
    refusal = "the gate would refuse the result, with a new issue: not-followable in clusters/prod/"
    assert reply.startswith(f"`/delete` changed nothing: {refusal}"), forge.runs[-1].log[-3000:]
    ((actor, verb, result, url),) = forge.audits()
    assert (actor, verb, url) == (MAINTAINER, "delete", None)
    assert result.startswith(f"refused: {refusal}"), result
    nothing_pushed(forge)
    # The Widget itself may go: the result is accepted, and the file is removed.
    reply = forge.ask("/delete Widget web/w in prod")
    (pull,) = forge.bot_pulls()
    branch = "ichor/delete-web-w"
    assert (pull.head_ref, pull.base_ref) == (branch, "main")
    assert reply == f"Opened {pull.url} for `/delete`."
    assert forge.git("diff", "--name-status", "main", branch).split() == ["D", WIDGET]
    assert forge.git("cat-file", "-t", f"{branch}:{CRD}") == "blob"


def test_delete_removes_the_file_when_nothing_else_is_left(forge: Forge) -> None:
    forge.ask("/delete ConfigMap web/settings in prod")
    branch = "ichor/delete-web-settings"
    assert forge.git("diff", "--name-status", "main", branch).split() == ["D", SETTINGS]
