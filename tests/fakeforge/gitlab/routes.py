"""The endpoints the fake GitLab serves and GitLab's checks of their parameters.

There is no recorded GitLab OpenAPI description: each rule is what GitLab's REST documentation
states for the endpoint (see the package docstring). A departure is a 400 in GitLab's words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.fakeforge.base import Reject
from tests.fakeforge.httpserver import Request, Response

STATUS_STATES = ("pending", "running", "success", "failed", "canceled")
MR_STATES = ("opened", "closed", "locked", "merged", "all")
POSITION_TYPES = ("text", "image", "file")
DESCRIPTION_LIMIT = 255
NOTE_LIMIT = 1_000_000
MR_DESCRIPTION_LIMIT = 1_048_576
_PAGING = {"page": "int", "per_page": "int"}

# Route name → (method, path pattern under /api/v4, parameter rules). Rules: "str", "int",
# "bool", "position", a tuple of allowed values; a leading "!" marks a required parameter.
_P = "/projects/(?P<project>[^/]+)"
_MR = _P + "/merge_requests/(?P<iid>[^/]+)"
ROUTES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "current_user": ("GET", "/user", {}),
    "list_users": ("GET", "/users", {"username": "str", **_PAGING}),
    "post_status": (
        "POST",
        _P + "/statuses/(?P<sha>[^/]+)",
        {
            "state": ("!", *STATUS_STATES),
            "ref": "str",
            "name": "str",
            "context": "str",
            "target_url": "str",
            "description": "str",
            "coverage": "float",
            "pipeline_id": "int",
        },
    ),
    # GET /projects/:id/repository/commits/:sha/statuses: the latest status per name, or every
    # one with all=true, by id ascending (GitLab's default order).
    "list_statuses": (
        "GET",
        _P + "/repository/commits/(?P<sha>[^/]+)/statuses",
        {"ref": "str", "stage": "str", "name": "str", "all": "bool", **_PAGING},
    ),
    "list_mrs": (
        "GET",
        _P + "/merge_requests",
        {
            "state": MR_STATES,
            "source_branch": "str",
            "target_branch": "str",
            "order_by": ("created_at", "updated_at", "title"),
            "sort": ("asc", "desc"),
            **_PAGING,
        },
    ),
    "create_mr": (
        "POST",
        _P + "/merge_requests",
        {
            "source_branch": "!str",
            "target_branch": "!str",
            "title": "!str",
            "description": "str",
            "target_project_id": "int",
            "remove_source_branch": "bool",
            "squash": "bool",
        },
    ),
    "get_mr": ("GET", _MR, {}),
    # PUT /projects/:id/merge_requests/:iid: at least one of these, or GitLab answers 400.
    "update_mr": (
        "PUT",
        _MR,
        {
            "target_branch": "str",
            "title": "str",
            "assignee_id": "int",
            "milestone_id": "int",
            "labels": "str",
            "description": "str",
            "state_event": ("close", "reopen"),
            "remove_source_branch": "bool",
            "squash": "bool",
            "discussion_locked": "bool",
            "allow_collaboration": "bool",
        },
    ),
    "list_versions": ("GET", _MR + "/versions", dict(_PAGING)),
    "list_notes": (
        "GET",
        _MR + "/notes",
        {"sort": ("asc", "desc"), "order_by": ("created_at", "updated_at"), **_PAGING},
    ),
    "create_note": ("POST", _MR + "/notes", {"body": "!str", "internal": "bool"}),
    "update_note": ("PUT", _MR + "/notes/(?P<note_id>[^/]+)", {"body": "!str"}),
    "award_note_emoji": ("POST", _MR + "/notes/(?P<note_id>[^/]+)/award_emoji", {"name": "!str"}),
    "list_discussions": ("GET", _MR + "/discussions", dict(_PAGING)),
    "create_discussion": (
        "POST",
        _MR + "/discussions",
        {"body": "!str", "position": "position", "commit_id": "str", "created_at": "str"},
    ),
    "update_discussion": (
        "PUT",
        _MR + "/discussions/(?P<discussion_id>[0-9a-f]+)",
        {"resolved": "!bool"},
    ),
    "get_member": ("GET", _P + "/members/all/(?P<user_id>[^/]+)", {}),
    # GET /groups/:id/members/all/:user_id: a member of the group or of an ancestor.
    "get_group_member": ("GET", "/groups/(?P<group>[^/]+)/members/all/(?P<user_id>[^/]+)", {}),
    "get_project": ("GET", _P, {"statistics": "bool", "license": "bool"}),
    # GET /projects: the projects the token's user sees (membership=true: those it is a member
    # of; min_access_level: at least that access).
    "list_projects": (
        "GET",
        "/projects",
        {
            "membership": "bool",
            "min_access_level": ("10", "15", "20", "30", "40", "50"),
            "archived": "bool",
            "owned": "bool",
            "simple": "bool",
            "order_by": (
                "id",
                "name",
                "path",
                "created_at",
                "updated_at",
                "last_activity_at",
                "similarity",
            ),
            "sort": ("asc", "desc"),
            **_PAGING,
        },
    ),
}
COMPILED = [
    (name, method, re.compile("/api/v4" + pattern)) for name, (method, pattern, _) in ROUTES.items()
]
INT_PARAMS = ("iid", "note_id", "user_id")
# Some of GitLab's quick actions: a line of a note that starts with one runs it as the note's
# author, the bot's user included (GitLab answers 201 all the same, so the fake only records
# it). The ones that change a merge request, and those the bot's replies could quote.
QUICK_ACTION = re.compile(
    r"/(approve|unapprove|merge|close|reopen|draft|ready|rebase|label|unlabel|relabel|assign"
    r"|unassign|reviewer|title|lock|unlock|submit_review|react|award|shrug|todo|done)(?:\s|$)",
    re.IGNORECASE,
)
GIT_PATH = re.compile(r"/(?P<repo>.+)\.git/(?:info/refs|git-upload-pack|git-receive-pack)")


def bad_request(message: str, *, key: str = "error") -> Reject:
    return Reject(Response(400, {key: message}), "validation_errors", message)


def not_found(what: str = "Not found") -> Reject:
    return Reject(Response(404, {"message": f"404 {what}"}))


def route(method: str, raw_path: str) -> tuple[str | None, dict[str, str]]:
    for name, route_method, pattern in COMPILED:
        match = pattern.fullmatch(raw_path)
        if match and route_method == method:
            return name, {**match.groupdict(), "_raw": raw_path}
    return None, {}


def params_of(req: Request) -> tuple[dict[str, Any], Any]:
    """Query and body parameters merged (GitLab reads both); the body as sent, for the call."""
    params: dict[str, Any] = dict(req.query)
    if not req.body.strip():
        return params, None
    content_type = req.headers.get("content-type", "")
    if "json" in content_type:
        try:
            body = json.loads(req.body)
        except ValueError:
            raise bad_request("body is not valid JSON") from None
        if not isinstance(body, dict):
            raise bad_request("body is not a JSON object")
        return {**params, **body}, body
    pairs = parse_qsl(req.body.decode("utf-8", "replace"), keep_blank_values=True)
    position = {k[9:-1]: v for k, v in pairs if k.startswith("position[")}
    form: dict[str, Any] = {k: v for k, v in pairs if not k.startswith("position[")}
    if position:
        form["position"] = position
    return {**params, **form}, form


def validate(route: str, params: dict[str, Any], record: list[str], where: str) -> None:
    """GitLab's parameter checks for ``route`` (400 on the first failure)."""
    rules = ROUTES[route][2]
    for name, rule in rules.items():
        if isinstance(rule, tuple):
            required, allowed, kind = rule[:1] == ("!",), rule, "enum"
            allowed = rule[1:] if required else rule
        else:
            required, allowed, kind = rule.startswith("!"), (), rule.lstrip("!")
        if name not in params:
            if required:
                raise bad_request(f"{name} is missing")
            continue
        value = params[name]
        if kind == "enum" and value not in allowed:
            raise bad_request(f"{name} does not have a valid value")
        checks: dict[str, Callable[[Any], bool]] = {
            "int": is_int,
            "float": _is_float,
            "bool": lambda v: _bool(v) is not None,
            "str": lambda v: isinstance(v, str),
        }
        if kind in checks and not checks[kind](value):
            raise bad_request(f"{name} is invalid")
        if kind == "position":
            _check_position(value)
        if kind == "bool":
            params[name] = _bool(value)
    for name in params:
        if name not in rules:
            record.append(f"{where}: undocumented parameter {name!r} (GitLab ignores it)")
    _check_lengths(route, params, record, where)


def quick_actions(body: str) -> list[str]:
    """The quick actions GitLab runs for a note of ``body``: lines that start with one, outside
    fenced code blocks (an escaped ``\\/approve`` is text)."""
    found: list[str] = []
    fence = ""
    for line in body.split("\n"):
        mark = line.lstrip(" ")[:3]
        if mark in ("```", "~~~") and (not fence or mark == fence):
            fence = "" if fence else mark
            continue
        match = QUICK_ACTION.match(line)
        if not fence and match:
            found.append(match.group(1).lower())
    return found


def _check_lengths(route: str, params: dict[str, Any], record: list[str], where: str) -> None:
    if route == "post_status":
        if len(str(params.get("description") or "")) > DESCRIPTION_LIMIT:
            raise bad_request("description is too long (maximum is 255 characters)", key="message")
        target = params.get("target_url")
        if target is not None and urlsplit(str(target)).scheme not in ("http", "https"):
            raise bad_request("target_url is blocked: Only allowed schemes are http, https")
    if route in ("create_note", "update_note", "create_discussion"):
        for action in quick_actions(str(params["body"])):
            record.append(f"{where}: the note runs GitLab's /{action} quick action as the bot")
        if not str(params["body"]).strip():
            raise bad_request("body is empty")
        if len(str(params["body"])) > NOTE_LIMIT:
            raise bad_request("Note is too long (maximum is 1000000 characters)", key="message")
    if route == "update_mr" and not params:
        raise bad_request("at least one parameter must be provided")
    if route in ("create_mr", "update_mr"):
        description = str(params.get("description") or "")
        # GitLab runs the quick actions of a merge request's description too.
        for action in quick_actions(description):
            record.append(f"{where}: the description runs GitLab's /{action} quick action")
        if len(description) > MR_DESCRIPTION_LIMIT:
            raise bad_request("description is too long", key="message")


def _check_position(position: Any) -> None:
    if not isinstance(position, dict):
        raise bad_request("position is invalid")
    for key in ("base_sha", "start_sha", "head_sha", "position_type"):
        if not position.get(key):
            raise bad_request(f"position[{key}] is missing")
    if position["position_type"] not in POSITION_TYPES:
        raise bad_request("position[position_type] does not have a valid value")
    if position["position_type"] != "text":
        return
    if not (position.get("new_path") or position.get("old_path")):
        raise bad_request("position[new_path], position[old_path] are missing, at least one")
    lines = [position.get(k) for k in ("new_line", "old_line") if position.get(k) is not None]
    if not lines:
        raise bad_request("position[new_line], position[old_line] are missing, at least one")
    if not all(is_int(v) and int(str(v)) >= 1 for v in lines):
        raise bad_request("position[new_line] is invalid")


def is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and value.isdigit())


def _is_float(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return not isinstance(value, bool)


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    return {"true": True, "false": False}.get(str(value).lower())


def phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""
