"""A change pull request's title and body (design.md 6): who asked, from where, and what merging
it changes: the objects, the target, each field before and after, and the gate's verdict on
the result. Everything a person or an API client wrote is escaped (no mention, no link, no
HTML), so a request cannot make the bot's pull request say more than it means.

The body's first line is a hidden marker: :data:`MARKER`, or for an object's change the one
:mod:`bot.changes.marker` writes, naming the verb and the object's whole identity."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.checks.markdown_text import inline_path, inline_text

_MAX_TITLE = 200
_MAX_LISTED = 50
MARKER = "<!-- ichor:change -->"  # tells the bot's change pull requests from people's


@dataclass(frozen=True, slots=True)
class FieldChange:
    path: str  # dotted, e.g. spec.approvalState
    before: str | None  # None: the field is added
    after: str | None  # None: the field (or the object) is removed


@dataclass(frozen=True, slots=True)
class Impact:
    target: str
    objects: tuple[str, ...]  # identity texts (`Deployment.apps web/frontend`)
    paths: tuple[str, ...]  # files written or removed
    fields: tuple[FieldChange, ...] = ()
    verdict: str = "accepted"  # the gate on the result: "accepted", or why it would refuse


@dataclass(frozen=True, slots=True)
class Requester:
    login: str  # the person (a comment's author, or who an API client says asked)
    link: str | None = None  # the triggering comment's URL; None for the API
    via_api: bool = False
    client: str | None = None  # the API token's name, when it is not the login itself


def object_title(verb: str, kind: str, namespace: str | None, name: str) -> str:
    return _title(f"ichor: {verb} {kind} {namespace or '_'}/{name}")


def ignore_title(pattern: str, target: str) -> str:
    return _title(f"ichor: ignore {pattern} in {target}")


def _title(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_TITLE else flat[: _MAX_TITLE - 1] + "…"


def pr_body(summary: str, requester: Requester, impact: Impact, marker: str = MARKER) -> str:
    """``summary`` is the bot's own sentence (what the pull request does); ``marker`` the
    first line (:func:`bot.changes.marker.object_marker` for an object's change)."""
    who = inline_text(requester.login, 100)
    if requester.via_api:
        client = requester.client
        through = (
            f" (client {inline_text(client, 100)})" if client and client != requester.login else ""
        )
        asked = f"Requested through the change API by {who}{through}."
    elif requester.link and requester.link.startswith(("https://", "http://")):
        asked = f"Requested by {who} in [this comment]({_url(requester.link)})."
    else:
        asked = f"Requested by {who}."
    lines = [marker, summary, "", asked, "", "### Impact", ""]
    lines.append(f"- **Target**: {inline_text(impact.target, 100)}")
    lines += _listed("Objects", [inline_text(o, 300) for o in impact.objects])
    lines += _listed("Files", [inline_path(p) for p in impact.paths])
    if impact.fields:
        lines += ["", "| field | before | after |", "| --- | --- | --- |"]
        lines += [
            f"| {inline_text(f.path, 200)} | {_value(f.before)} | {_value(f.after)} |"
            for f in impact.fields[:_MAX_LISTED]
        ]
    lines += ["", f"**The gate on the result**: {inline_text(impact.verdict, 2000)}"]
    lines += [
        "",
        "This branch belongs to Ichor Bot: a new identical request finds this pull request "
        "instead of opening another. Review and merge it as any change.",
    ]
    return "\n".join(lines)


def _listed(label: str, items: Sequence[str]) -> list[str]:
    if not items:
        return []
    shown = [f"  - {i}" for i in items[:_MAX_LISTED]]
    if len(items) > _MAX_LISTED:
        shown.append(f"  - … and {len(items) - _MAX_LISTED} more")
    return [f"- **{label}**:", *shown]


def _value(value: str | None) -> str:
    return "*(none)*" if value is None else inline_text(value, 200)


def _url(url: str) -> str:
    # A URL from the forge's own answer; still, nothing in it may close the link.
    return "".join(c if c.isprintable() and c not in " ()<>[]" else f"%{ord(c):02X}" for c in url)
