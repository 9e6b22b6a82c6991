"""What GitHub refuses in a request body that its description cannot say: the rules stated in
prose (check runs, reviews and their line comments), checked after the schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.fakeforge.openapi import Operation, Problem

MAX_ANNOTATION_BYTES = 64 * 1024
MAX_ANNOTATION_TITLE = 255
SIDES = ("LEFT", "RIGHT")


def documented_rules(op: Operation, body: Any) -> list[Problem]:
    """Rules the description states in prose, which GitHub enforces."""
    if not isinstance(body, dict):
        return []
    if op.operation_id == "pulls/create-review":
        return review_problems(body)
    if op.operation_id == "pulls/create-review-comment":
        return [] if "in_reply_to" in body else placement_problems(body, "")
    if op.operation_id not in {"checks/create", "checks/update"}:
        return []
    problems: list[Problem] = []
    if body.get("status") == "completed" and "conclusion" not in body:
        problems.append(
            Problem("conclusion", "missing_field", "conclusion: required when status is completed")
        )
    if "completed_at" in body and "conclusion" not in body:
        problems.append(
            Problem(
                "conclusion", "missing_field", "conclusion: required when completed_at is given"
            )
        )
    if body.get("conclusion") == "stale":
        problems.append(Problem("conclusion", "invalid", "conclusion: only GitHub can set 'stale'"))
    output = body.get("output")
    annotations = output.get("annotations", []) if isinstance(output, dict) else []
    for i, ann in enumerate(annotations):
        where = f"output.annotations.{i}"
        start, end = ann.get("start_line"), ann.get("end_line")
        if start < 1:
            problems.append(
                Problem(f"{where}.start_line", "invalid", f"{where}.start_line: lines start at 1")
            )
        if end < start:
            problems.append(
                Problem(
                    f"{where}.end_line",
                    "invalid",
                    f"{where}.end_line: {end} < start_line {start}",
                )
            )
        if ("start_column" in ann or "end_column" in ann) and start != end:
            problems.append(
                Problem(
                    f"{where}.start_column",
                    "invalid",
                    f"{where}: columns are only allowed when start_line == end_line",
                )
            )
        if len(ann.get("title") or "") > MAX_ANNOTATION_TITLE:
            problems.append(
                Problem(f"{where}.title", "invalid", f"{where}.title: over 255 characters")
            )
        for key in ("message", "raw_details"):
            if len((ann.get(key) or "").encode()) > MAX_ANNOTATION_BYTES:
                problems.append(Problem(f"{where}.{key}", "invalid", f"{where}.{key}: over 64 KB"))
    return problems


def review_problems(body: Mapping[str, Any]) -> list[Problem]:
    """A review's rules beyond its schema: a COMMENT or REQUEST_CHANGES review says something
    (a body or comments); each comment is placed and its sides are sides."""
    problems: list[Problem] = []
    comments = body.get("comments") or []
    if body.get("event") in ("COMMENT", "REQUEST_CHANGES") and not (body.get("body") or comments):
        problems.append(
            Problem("body", "missing_field", f"body: required for a {body['event']} review")
        )
    for i, comment in enumerate(comments):
        problems += placement_problems(comment, f"comments.{i}.")
    return problems


def placement_problems(comment: Mapping[str, Any], where: str) -> list[Problem]:
    """Where a review comment goes: ``line`` (``position`` is closing down) unless it is on a
    whole file, sides LEFT or RIGHT, a range's start before its end."""
    problems: list[Problem] = []
    if (
        comment.get("subject_type") != "file"
        and "line" not in comment
        and ("position" not in comment)
    ):
        problems.append(
            Problem(f"{where}line", "missing_field", f"{where}line: required (or position)")
        )
    for key in ("side", "start_side"):
        if key in comment and comment[key] not in SIDES:
            problems.append(
                Problem(f"{where}{key}", "invalid", f"{where}{key}: not one of {SIDES}")
            )
    start, end = comment.get("start_line"), comment.get("line")
    if isinstance(start, int) and isinstance(end, int) and start >= end:
        problems.append(
            Problem(
                f"{where}start_line",
                "invalid",
                f"{where}start_line: {start} must precede the end line {end}",
            )
        )
    return problems
