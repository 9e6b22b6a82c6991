"""GitHub ``merge_group`` deliveries, built for tests.

No recorded ``merge_group`` payload is at hand (the octokit examples the other fixtures come from
have none), so these are built to the shape of GitHub's published schema (octokit
``webhooks-schemas`` 7.6.1, ``merge_group$checks_requested`` / ``merge_group$destroyed``, in
``../shared/forge-data/github/openapi/``), with the repository, sender and installation of the
recorded push; ``tests/webhooks/test_merge_group.py`` validates them against that schema. The
branch is named the way GitHub names a merge group's branch,
``refs/heads/gh-readonly-queue/<base>/pr-<number>-<base sha>``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.conftest import FIXTURES

PUSH_FIXTURE = FIXTURES / "webhooks/github/push__branch.json"


def queue_ref(base_ref: str, base_sha: str, pulls: tuple[int, ...]) -> str:
    """The branch GitHub builds a merge group on (several pull requests joined by ``-``)."""
    entries = "-".join(f"pr-{n}-{base_sha}" for n in pulls)
    return f"refs/heads/gh-readonly-queue/{base_ref}/{entries}"


def merge_group_payload(
    *,
    head_sha: str,
    base_sha: str,
    pulls: tuple[int, ...] = (7,),
    base_ref: str = "main",
    action: str = "checks_requested",
    reason: str = "dequeued",
    head_ref: str | None = None,
) -> dict[str, Any]:
    """A ``merge_group`` delivery for the recorded push's repository (the caller points it at
    its own); ``reason`` is sent with ``destroyed`` only, as GitHub does."""
    push: dict[str, Any] = json.loads(PUSH_FIXTURE.read_text())
    payload: dict[str, Any] = {
        "action": action,
        "merge_group": {
            "head_sha": head_sha,
            "head_ref": head_ref or queue_ref(base_ref, base_sha, pulls),
            "base_ref": f"refs/heads/{base_ref}",
            "base_sha": base_sha,
            "head_commit": {
                "id": head_sha,
                "tree_id": "5" * 40,
                "message": f"Merge pull request #{pulls[0] if pulls else 0}",
                "timestamp": "2026-03-01T10:00:00Z",
                "author": {"name": "Octo Cat", "email": "octocat@example.com"},
                "committer": {"name": "GitHub", "email": "noreply@github.com"},
            },
        },
        "repository": copy.deepcopy(push["repository"]),
        "sender": copy.deepcopy(push["sender"]),
        "installation": {"id": 42, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI="},
    }
    if action == "destroyed":
        payload["reason"] = reason
    return payload
