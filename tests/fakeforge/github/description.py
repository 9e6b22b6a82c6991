"""What the fake GitHub validates with: the recorded OpenAPI description, plus the operations
GitHub serves that the trimmed recording lacks, and the names handlers take from operations."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from tests.fakeforge.openapi import DESCRIPTION, OpenApi, Operation

# Operations GitHub serves that the recorded (trimmed) description lacks, as GitHub describes
# them (api.github.com, operationId as named), cut to what validation reads. Each is added only
# while the recorded file lacks it; once the file is re-trimmed to include it, delete it here
# (tests/fakeforge/github/test_fake_github.py fails until then).
SUPPLEMENT: dict[str, dict[str, Any]] = {
    "/app-manifests/{code}/conversions": {
        "post": {
            "summary": "Create a GitHub App from a manifest",
            "description": "Use this endpoint to complete the handshake necessary when "
            "implementing the GitHub App Manifest flow.",
            "tags": ["apps"],
            "operationId": "apps/create-from-manifest",
            "externalDocs": {
                "description": "API method documentation",
                "url": "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest",
            },
            "parameters": [
                {"name": "code", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "responses": {
                "201": {
                    "description": "Response",
                    "content": {
                        "application/json": {
                            "schema": {
                                "allOf": [
                                    {"$ref": "#/components/schemas/integration"},
                                    {
                                        "type": "object",
                                        "properties": {
                                            "client_id": {"type": "string"},
                                            "client_secret": {"type": "string"},
                                            "webhook_secret": {
                                                "type": "string",
                                                "nullable": True,
                                            },
                                            "pem": {"type": "string"},
                                        },
                                        "required": [
                                            "client_id",
                                            "client_secret",
                                            "webhook_secret",
                                            "pem",
                                        ],
                                        "additionalProperties": True,
                                    },
                                ]
                            }
                        }
                    },
                },
                "404": {"$ref": "#/components/responses/not_found"},
                "422": {"$ref": "#/components/responses/validation_failed_simple"},
            },
            "x-github": {
                "githubCloudOnly": False,
                "enabledForGitHubApps": False,
                "category": "apps",
                "subcategory": "apps",
            },
        }
    },
    "/repos/{owner}/{repo}/pulls/comments/{comment_id}": {
        "patch": {
            "summary": "Update a review comment for a pull request",
            "description": "Edits the content of a specified review comment.",
            "tags": ["pulls"],
            "operationId": "pulls/update-review-comment",
            "externalDocs": {
                "description": "API method documentation",
                "url": "https://docs.github.com/rest/pulls/comments"
                "#update-a-review-comment-for-a-pull-request",
            },
            "parameters": [
                {"$ref": "#/components/parameters/owner"},
                {"$ref": "#/components/parameters/repo"},
                {"$ref": "#/components/parameters/comment-id"},
            ],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {
                                "body": {
                                    "type": "string",
                                    "description": "The text of the reply to the review comment.",
                                }
                            },
                            "required": ["body"],
                        }
                    }
                },
            },
            "responses": {
                "200": {
                    "description": "Response",
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/pull-request-review-comment"}
                        }
                    },
                }
            },
            "x-github": {
                "githubCloudOnly": False,
                "enabledForGitHubApps": True,
                "category": "pulls",
                "subcategory": "comments",
            },
        }
    },
}


class _Supplemented(type(DESCRIPTION)):  # type: ignore[misc]
    """The recorded description's path, read as that file plus :data:`SUPPLEMENT`."""

    def read_text(self, *args: Any, **kwargs: Any) -> str:
        document = json.loads(super().read_text(*args, **kwargs))
        for template, methods in SUPPLEMENT.items():
            item = document["paths"].setdefault(template, {})
            for method, operation in methods.items():
                item.setdefault(method, operation)
        return json.dumps(document)


@functools.cache
def supplemented() -> OpenApi:
    """GitHub's recorded description plus :data:`SUPPLEMENT`: what every fake validates with."""
    return OpenApi(_Supplemented(DESCRIPTION))


def resource(op: Operation) -> str:
    group = op.operation_id.split("/", 1)[0]
    return {"checks": "CheckRun", "pulls": "PullRequest", "issues": "IssueComment"}.get(
        group, "Resource"
    )


def handler_name(op: Operation) -> str:
    return re.sub(r"[^a-z0-9]+", "_", op.operation_id.lower()).strip("_")
