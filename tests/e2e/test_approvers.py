"""A target's approvers end to end on every forge (design.md 5.1): with ``approvers:
codeowners``, the owners the forge's CODEOWNERS file names on the base branch may approve the
target's new objects, and a writer who is not one is refused with the owners named; with a
list, only those named. ``commands.allow_author_approval`` is on here, so the author, a writer,
is refused only for not being an owner."""

from __future__ import annotations

from bot.approvals.codeowners import PATHS
from tests.e2e.drivers import AUTHOR, MAINTAINER, Forge, Gitea, GitHub, GitLab
from tests.support.gitops import configmap

CONFIG = """version: 1
targets:
  - {{name: prod, path: clusters/prod, mode: strict, approvers: {approvers}}}
commands:
  min_permission: write
  allow_author_approval: true
"""
A = "clusters/prod/v1/configmaps/web/a.yaml"
B = "clusters/prod/v1/configmaps/web/b.yaml"
TWO_NEW = {A: configmap("a"), B: configmap("b")}


def _refused_then_approved(forge: Forge, head: str, named: str, who: str) -> None:
    refused = forge.ask("/ichor approve", user=AUTHOR)
    assert refused.startswith(f"`/approve` changed nothing at <code>{head[:7]}</code>.")
    assert f"@{AUTHOR} may not approve these objects" in refused
    assert named in refused and f"@&#8203;{who}" in refused  # who may, named not mentioned
    assert forge.replied_approvals() == () and forge.stored_approvals() == ()

    approved = forge.ask("/ichor approve")  # maria, the owner
    assert approved.startswith(f"@{MAINTAINER} approved 2 new objects of strict targets")
    assert forge.verdict() == (forge.PASSED, "1 touched target accepted")


def test_the_code_owners_approve_and_a_writer_who_is_not_one_is_refused(forge: Forge) -> None:
    owners = f"# who owns what\n*  @{AUTHOR}\nclusters/prod/ @{MAINTAINER}\n"
    forge.base({PATHS[forge.kind]: owners}, config=CONFIG.format(approvers="codeowners"))
    head = forge.push(TWO_NEW)
    assert forge.verdict()[0] == forge.WAITING
    named = f"the owners of <code>{A}</code> in <code>{PATHS[forge.kind]}</code>"
    _refused_then_approved(forge, head, named, MAINTAINER)


# Added to the team, but not in it yet: invited on GitHub, awaiting on GitLab; Gitea has no
# pending membership, so a blocked account there.
NOT_IN = {"github": "pending", "gitlab": "awaiting", "gitea": "blocked", "forgejo": "blocked"}


def test_a_team_in_the_list_admits_its_active_members(forge: Forge) -> None:
    assert isinstance(forge, GitHub | GitLab | Gitea)
    forge.fake.add_team_member("acme/platform", MAINTAINER)
    forge.fake.add_team_member("acme/platform", AUTHOR, state=NOT_IN[forge.kind])
    forge.base(config=CONFIG.format(approvers="[acme/platform]"))
    head = forge.push(TWO_NEW)
    _refused_then_approved(forge, head, "the approvers of prod", "acme/platform")
