"""What the bot says about its commands: one usage line per verb, and the ``/help`` reply."""

from __future__ import annotations

from collections.abc import Sequence

from bot.commands.command import Verb

_USAGE: dict[Verb, str] = {
    "help": "/help",
    "recheck": "/recheck",
    "approve": ("/approve, /approve cancel or /approve <ns>/<name> [field=value …] [in <target>]"),
    "reject": "/reject <ns>/<name> [reason …] [in <target>]",
    "delete": "/delete <kind> <ns>/<name> [in <target>]",
    "ignore": "/ignore <pattern> [in <target>]",
}

_PERMISSION = "`{permission}`"
# (command, who may run it, what it does): design.md 5; {permission} is commands.min_permission.
_TABLE: tuple[tuple[str, str, str], ...] = (
    ("/help", "anyone", "this reply"),
    ("/recheck", "`read`", "checks the current head again"),
    (
        "/approve",
        _PERMISSION + ", not the PR author",
        "approves the new objects of strict targets that the check listed as waiting",
    ),
    ("/approve cancel", "whoever approved", "withdraws that approval"),
    (
        "/approve <ns>/<name> [field=value …] [in <target>]",
        _PERMISSION,
        "opens a PR setting the target's approval field on that object",
    ),
    (
        "/reject <ns>/<name> [reason …] [in <target>]",
        _PERMISSION,
        "opens a PR setting that object's decision to rejected",
    ),
    (
        "/delete <kind> <ns>/<name> [in <target>]",
        _PERMISSION,
        "opens a PR removing that object's document",
    ),
    (
        "/ignore <pattern> [in <target>]",
        _PERMISSION,
        "opens a PR adding the pattern to the target's `.gittargetignore`",
    ),
)


def usage(verb: Verb) -> str:
    """The verb's usage in one plain-text line, as usage errors end with it."""
    return _USAGE[verb]


def help_text(targets: Sequence[tuple[str, str]], *, min_permission: str | None = None) -> str:
    """The ``/help`` reply in Markdown: the commands, who may run each, and the repository's
    targets as (name, mode) pairs, as ``.ichor.yaml`` validated them. ``min_permission`` is
    ``commands.min_permission`` of the base branch's ``.ichor.yaml``; when it is not known,
    the reply names the setting instead."""
    permission = min_permission or "commands.min_permission"
    rows = [
        f"| `{command}` | {who.format(permission=permission)} | {what} |"
        for command, who, what in _TABLE
    ]
    listed = ", ".join(f"`{name}` ({mode})" for name, mode in targets)
    return "\n".join(
        [
            "**Ichor Bot commands**: each on a line of its own, at the start of the line,"
            " in a new comment (an edit runs nothing); at most 10 per comment.",
            "",
            "| command | who may run it | what it does |",
            "|---|---|---|",
            *rows,
            "",
            "`<ns>` is `_` for a cluster-scoped object; `<kind>` is `Kind` or `Kind.group`"
            " (`Deployment.apps`); `in <target>` names the target to act in.",
            "",
            f"**Targets**: {listed}." if targets else "**Targets**: none configured.",
        ]
    )
