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


def _listing(summary: str, operation_id: str, docs: str, item: dict[str, Any]) -> dict[str, Any]:
    return {
        "summary": summary,
        "tags": ["apps"],
        "operationId": operation_id,
        "externalDocs": {"description": "API method documentation", "url": docs},
        "parameters": [
            {"$ref": "#/components/parameters/per-page"},
            {"$ref": "#/components/parameters/page"},
        ],
        "responses": {
            "200": {
                "description": "Response",
                "content": {"application/json": {"schema": item}},
                "headers": {"Link": {"$ref": "#/components/headers/link"}},
            },
            "304": {"$ref": "#/components/responses/not_modified"},
            "403": {"$ref": "#/components/responses/forbidden"},
            "401": {"$ref": "#/components/responses/requires_authentication"},
        },
        "x-github": {
            "githubCloudOnly": False,
            "enabledForGitHubApps": True,
            "category": "apps",
            "subcategory": "installations" if "repos" in operation_id else "apps",
        },
    }


# GitHub's "Simple webhook delivery" (hook-delivery-item), which the trimmed components lack.
HOOK_DELIVERY_ITEM: dict[str, Any] = {
    "title": "Simple webhook delivery",
    "type": "object",
    "properties": {
        "id": {"type": "integer", "format": "int64"},
        "guid": {"type": "string"},
        "delivered_at": {"type": "string", "format": "date-time"},
        "redelivery": {"type": "boolean"},
        "duration": {"type": "number"},
        "status": {"type": "string"},
        "status_code": {"type": "integer"},
        "event": {"type": "string"},
        "action": {"type": "string", "nullable": True},
        "installation_id": {"type": "integer", "nullable": True},
        "repository_id": {"type": "integer", "nullable": True},
        "throttled_at": {"type": "string", "format": "date-time", "nullable": True},
    },
    "required": [
        "id",
        "guid",
        "delivered_at",
        "redelivery",
        "duration",
        "status",
        "status_code",
        "event",
        "action",
        "installation_id",
        "repository_id",
    ],
}
_PATH_PARAM = {"in": "path", "required": True, "schema": {"type": "string"}}
SUPPLEMENT["/orgs/{org}/teams/{team_slug}/memberships/{username}"] = {
    "get": {
        "summary": "Get team membership for a user",
        "tags": ["teams"],
        "operationId": "teams/get-membership-for-user-in-org",
        "externalDocs": {
            "description": "API method documentation",
            "url": "https://docs.github.com/rest/teams/members#get-team-membership-for-a-user",
        },
        "parameters": [{"name": name, **_PATH_PARAM} for name in ("org", "team_slug", "username")],
        "responses": {
            "200": {
                "description": "Response",
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "required": ["url", "role", "state"],
                            "properties": {
                                "url": {"type": "string"},
                                "role": {"type": "string", "enum": ["member", "maintainer"]},
                                "state": {"type": "string", "enum": ["active", "pending"]},
                            },
                        }
                    }
                },
            },
            "404": {"$ref": "#/components/responses/not_found"},
        },
        "x-github": {
            "githubCloudOnly": False,
            "enabledForGitHubApps": True,
            "category": "teams",
            "subcategory": "members",
        },
    }
}
_APP_WEBHOOKS = {"githubCloudOnly": False, "enabledForGitHubApps": False, "category": "apps"}
SUPPLEMENT.update(
    {
        "/app/installations": {
            "get": _listing(
                "List installations for the authenticated app",
                "apps/list-installations",
                "https://docs.github.com/rest/apps/apps"
                "#list-installations-for-the-authenticated-app",
                {"type": "array", "items": {"$ref": "#/components/schemas/installation"}},
            )
        },
        "/installation/repositories": {
            "get": _listing(
                "List repositories accessible to the app installation",
                "apps/list-repos-accessible-to-installation",
                "https://docs.github.com/rest/apps/installations"
                "#list-repositories-accessible-to-the-app-installation",
                {
                    "type": "object",
                    "required": ["total_count", "repositories"],
                    "properties": {
                        "total_count": {"type": "integer"},
                        "repositories": {
                            "type": "array",
                            "items": {"$ref": "#/components/schemas/repository"},
                        },
                        "repository_selection": {"type": "string"},
                    },
                },
            )
        },
        "/app/hook/deliveries": {
            "get": {
                "summary": "List deliveries for an app webhook",
                "tags": ["apps"],
                "operationId": "apps/list-webhook-deliveries",
                "externalDocs": {
                    "description": "API method documentation",
                    "url": "https://docs.github.com/rest/apps/webhooks"
                    "#list-deliveries-for-an-app-webhook",
                },
                "parameters": [
                    {"$ref": "#/components/parameters/per-page"},
                    {
                        "name": "cursor",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string"},
                    },
                    {
                        "name": "status",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string", "enum": ["success", "failure"]},
                    },
                ],
                "responses": {
                    "200": {
                        "description": "Response",
                        "content": {
                            "application/json": {
                                "schema": {"type": "array", "items": HOOK_DELIVERY_ITEM}
                            }
                        },
                    },
                    "422": {"$ref": "#/components/responses/validation_failed"},
                },
                "x-github": {**_APP_WEBHOOKS, "subcategory": "webhooks"},
            }
        },
        "/app/hook/deliveries/{delivery_id}/attempts": {
            "post": {
                "summary": "Redeliver a delivery for an app webhook",
                "tags": ["apps"],
                "operationId": "apps/redeliver-webhook-delivery",
                "externalDocs": {
                    "description": "API method documentation",
                    "url": "https://docs.github.com/rest/apps/webhooks"
                    "#redeliver-a-delivery-for-an-app-webhook",
                },
                "parameters": [
                    {
                        "name": "delivery_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "integer"},
                    }
                ],
                "responses": {
                    "202": {
                        "description": "Accepted",
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "additionalProperties": True}
                            }
                        },
                    },
                    "422": {"$ref": "#/components/responses/validation_failed"},
                },
                "x-github": {**_APP_WEBHOOKS, "subcategory": "webhooks"},
            }
        },
    }
)


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
