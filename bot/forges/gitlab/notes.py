"""What comment commands need from GitLab: a merge request's notes read back as
:class:`bot.forges.base.ForgeComment`, award emoji on a note, a new note, and a user's access
level. The functions taking a client or a merge request run under
:meth:`.api.GitLabAPI.run`; the others only read payloads.

Edited. GitLab's REST note has ``created_at`` and ``updated_at`` only (``last_edited_at`` is in
webhook and UI payloads, and is trusted where present). ``updated_at`` also moves when a thread
is resolved, which is no edit: a move up to the note's ``resolved_at`` is not counted.

Bots. A note's author is a ``UserBasic``, without the ``bot`` flag ``GET /user`` has; so besides
``bot`` (when present) the usernames GitLab gives the users of project and group access tokens
(``project_<id>_bot_<hash>``, ``group_<id>_bot_<hash>``; before 16.x ``project_<id>_bot`` and a
number) and of service accounts (``service_account_…``) mark one.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping
from typing import Any

import gitlab

from bot.errors import ForgeStatusError, PermanentForgeError
from bot.forges.base import ForgeComment, Permission, Reaction
from bot.forges.gitlab.api import PER_PAGE, active_level, by_bot, user_id

# GitLab's emoji names for the reactions the bot gives.
EMOJI: dict[Reaction, str] = {
    "eyes": "eyes",
    "+1": "thumbsup",
    "-1": "thumbsdown",
    "confused": "confused",
}
# Access levels: 10 guest, 15 planner, 20 reporter, 30 developer, 40 maintainer, 50 owner
# (5 is "minimal access": no repository access at all).
ACCESS = ((50, Permission.ADMIN), (40, Permission.MAINTAIN), (30, Permission.WRITE))
ACCESS_READ = 10
# GitLab's answer (404, or 400 in some releases) to an award the user already gave.
ALREADY_AWARDED = "has already been taken"
_BOT_USER = re.compile(r"(?:project|group)_\d+_bot(?:\d*|_[0-9a-f]+)|service_account_[\w.-]+")
_RESOLVE_SLACK = datetime.timedelta(seconds=1)  # updated_at and resolved_at of one save
_RECENT = 20  # newest notes looked at for a reply a lost answer already posted


def is_bot(author: Mapping[str, Any]) -> bool:
    """Whether GitLab marks the note's author as a bot (see the module doc)."""
    return author.get("bot") is True or bool(_BOT_USER.fullmatch(str(author.get("username"))))


def edited(note: Mapping[str, Any]) -> bool:
    """Whether the note's body changed after it was created (see the module doc)."""
    if "last_edited_at" in note:
        return bool(note["last_edited_at"])
    created, updated = note.get("created_at"), note.get("updated_at")
    if not created or not updated or created == updated:
        return False
    first, last = _when(created), _when(updated)
    if first is None or last is None:  # a format not read: trust the strings differing
        return True
    resolved = _when(note.get("resolved_at"))
    if resolved is not None and last <= resolved + _RESOLVE_SLACK:
        return False
    return last > first


def _when(value: Any) -> datetime.datetime | None:
    """A GitLab timestamp: ISO 8601 (REST) or ``2017-12-10 17:05:14 UTC`` (webhooks)."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip().removesuffix(" UTC").replace("Z", "+00:00")
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)


def comment(note: Mapping[str, Any], url: str | None) -> ForgeComment:
    author = note.get("author")
    author = author if isinstance(author, dict) else {}
    return ForgeComment(
        id=str(note["id"]),
        author=str(author.get("username") or ""),
        body=str(note.get("body") or ""),
        author_is_bot=is_bot(author),
        edited=edited(note),
        url=url,
    )


def note_url(mr_url: str, note_id: int | str) -> str:
    return f"{mr_url}#note_{note_id}"


def list_comments(mr: Any, mr_url: str) -> list[ForgeComment]:
    """Every note of ``mr`` but GitLab's own (``system``), oldest first, all pages; ``mr_url``
    is the merge request's web page."""
    listed = mr.notes.list(iterator=True, per_page=PER_PAGE, sort="asc", order_by="created_at")
    notes: Iterable[dict[str, Any]] = (n.attributes for n in listed)
    return [comment(n, note_url(mr_url, n["id"])) for n in notes if not n.get("system")]


def parse_note_id(comment_id: str) -> int:
    """A note's id as :class:`ForgeComment` carries it (GitLab's are integers)."""
    if not comment_id.isdecimal():
        raise PermanentForgeError(f"GitLab: {comment_id!r} is not a note id")
    return int(comment_id)


def award(mr: Any, note: int, reaction: Reaction) -> None:
    mr.notes.get(note, lazy=True).awardemojis.create({"name": EMOJI[reaction]})


def post_note(mr: Any, body: str, me: int, *, again: bool) -> int:
    """A new note on ``mr``; its id. ``again`` (an earlier attempt's answer was lost): the
    note that attempt posted, if it is the newest one, instead of a second copy. Newest only,
    because the command being answered is newer than any earlier reply with the same body."""
    if again:
        recent = mr.notes.list(sort="desc", order_by="created_at", per_page=_RECENT, get_all=False)
        newest = next((n.attributes for n in recent if not n.attributes.get("system")), None)
        if newest is not None and by_bot(newest, me) and newest.get("body") == body:
            return int(newest["id"])
    return int(mr.notes.create({"body": body}).attributes["id"])


def access_level(gl: gitlab.Gitlab, project: str, user: str) -> int:
    """``user``'s access level on ``project``, directly or through a group; 0 for no account
    of that name, no membership, or one not active. A project GitLab does not show raises."""
    account = user_id(gl, user)
    if account is None:
        return 0
    try:
        member = gl.projects.get(project, lazy=True).members_all.get(account)
    except ForgeStatusError as exc:
        # Not a member: "404 Not found". "404 Project Not Found" is the token's, not theirs.
        if exc.status == 404 and "project" not in exc.message.lower():
            return 0
        raise
    return active_level(member.attributes)


def permission_of(level: int) -> Permission:
    for threshold, permission in ACCESS:
        if level >= threshold:
            return permission
    return Permission.READ if level >= ACCESS_READ else Permission.NONE


def defuse_quick_actions(body: str) -> str:
    """``body`` with each line that starts with ``/`` outside a fenced code block escaped
    (``\\/``, which Markdown shows as ``/``): GitLab runs such a line of a new note as a quick
    action of the bot's account (``/approve``, ``/merge``, ``/close``), as it would a person's."""
    lines = body.split("\n")
    fence = ""
    for i, line in enumerate(lines):
        stripped = line.lstrip(" ")
        mark = stripped[:3]
        if mark in ("```", "~~~") and (not fence or mark == fence):
            fence = "" if fence else mark
        elif not fence and line.startswith("/"):
            lines[i] = "\\" + line
    return "\n".join(lines)
