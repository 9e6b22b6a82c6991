"""Who may approve what: a target's list (users, teams through the forge), its code owners, or
anyone the permission check let through when the target names nobody."""

from __future__ import annotations

from bot.approvals.approvers import may_approve
from bot.approvals.codeowners import parse_codeowners, unreadable
from bot.approvals.pending import NewObject
from bot.gate.report import ManagedObject


def obj(target: str, path: str, name: str = "a") -> NewObject:
    return NewObject(target, ManagedObject(("", "ConfigMap", "web", name), path, 1, "d" * 64))


PROD = obj("prod", "clusters/prod/a.yaml")
DEV = obj("dev", "clusters/dev/b.yaml", "b")


def test_a_target_without_approvers_takes_anyone_permitted() -> None:
    split = may_approve([PROD], "zoe", {"prod": None}, None, None)
    assert split.mine == (PROD,) and split.not_mine == ()


def test_a_list_admits_its_users_and_team_members_only() -> None:
    asked: list[tuple[str, str]] = []

    def member(team: str, login: str) -> bool:
        asked.append((team, login))
        return team == "org/platform" and login == "bea"

    rules = {"prod": ("Alice", "org/platform"), "dev": None}
    assert may_approve([PROD, DEV], "alice", rules, None, member).mine == (PROD, DEV)
    assert asked == []  # a named user needs no team lookup
    assert may_approve([PROD], "bea", rules, None, member).mine == (PROD,)
    refused = may_approve([PROD, DEV], "carl", rules, None, member)
    assert refused.mine == (DEV,)
    (why,) = refused.not_mine
    assert (why.object, why.approvers, why.owners_file) == (PROD, ("Alice", "org/platform"), None)
    # A forge that cannot say who is in a team: the team admits nobody.
    assert may_approve([PROD], "bea", rules, None, None).mine == ()


def test_codeowners_name_the_owners_of_the_objects_file() -> None:
    owners = parse_codeowners(b"* @root\nclusters/prod/ @alice\n", ".github/CODEOWNERS")
    rules = {"prod": "codeowners", "dev": "codeowners"}
    split = may_approve([PROD, DEV], "alice", rules, owners, None)
    assert split.mine == (PROD,)
    (why,) = split.not_mine
    assert (why.object, why.approvers, why.owners_file) == (DEV, ("root",), ".github/CODEOWNERS")


def test_no_usable_codeowners_file_admits_nobody_and_says_why() -> None:
    missing = unreadable(".gitea/CODEOWNERS", "the base branch has no such file")
    (why,) = may_approve([PROD], "alice", {"prod": "codeowners"}, missing, None).not_mine
    assert why.approvers == () and why.problem == "the base branch has no such file"
