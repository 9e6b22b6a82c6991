"""Who may run which command: design.md 5's table, failing closed."""

from __future__ import annotations

import pytest

from bot.commands import ApproveCancel, ApproveHead, ApproveObject, Command, Help, Recheck
from bot.commands.authorize import (
    Authorization,
    permission_named,
    refusal,
    required_permission,
)
from bot.forges.base import Permission


def auth(permission: Permission, *, actor: str = "maria", author: str = "lee") -> Authorization:
    return Authorization(actor, permission, Permission.WRITE, author, allow_author_approval=False)


@pytest.mark.parametrize(
    ("command", "needed"),
    [
        (Help(1), Permission.NONE),
        (Recheck(1), Permission.READ),
        (ApproveCancel(1), Permission.READ),
        (ApproveHead(1), Permission.WRITE),
        (ApproveObject(1, "prod", "web", (), None), Permission.WRITE),
    ],
)
def test_what_each_command_needs(command: Command, needed: Permission) -> None:
    assert required_permission(command, Permission.WRITE) is needed


def test_anyone_may_ask_for_help() -> None:
    assert refusal(Help(1), auth(Permission.NONE)) is None


def test_below_the_minimum_is_refused_saying_what_is_needed() -> None:
    why = refusal(ApproveHead(1), auth(Permission.TRIAGE))
    assert why == "it needs `write` permission on this repository, and @maria has `triage`"
    assert "no access" in (refusal(Recheck(1), auth(Permission.NONE)) or "")
    assert refusal(Recheck(1), auth(Permission.READ)) is None
    assert refusal(ApproveHead(1), auth(Permission.ADMIN)) is None


def test_the_author_may_not_approve_unless_allowed() -> None:
    mine = auth(Permission.ADMIN, actor="Lee", author="lee")
    assert "author" in (refusal(ApproveHead(1), mine) or "")
    allowed = Authorization("lee", Permission.ADMIN, Permission.WRITE, "lee", True)
    assert refusal(ApproveHead(1), allowed) is None
    # Only approving the PR's own objects is barred; the author may withdraw or recheck.
    assert refusal(ApproveCancel(1), mine) is None
    assert refusal(Recheck(1), mine) is None


def test_min_permission_names() -> None:
    assert permission_named("maintain") is Permission.MAINTAIN
    assert set(permission_named(n) for n in ("read", "triage", "write", "maintain", "admin")) == (
        set(Permission) - {Permission.NONE}
    )
