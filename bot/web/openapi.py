"""The change API's OpenAPI 3.1 document (``GET /api/v1/openapi.json``), built from the same
pydantic models that check the requests, so what it says is what the endpoint does."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from bot import __version__
from bot.web.changes_model import ChangeAnswer, ChangeBody, ErrorAnswer

CHANGES_PATH = "/api/v1/changes"
OPENAPI_PATH = "/api/v1/openapi.json"
_REF = "#/components/schemas/{model}"

_ERRORS = {
    "400": "The body is not JSON.",
    "401": "No valid `Authorization: Bearer <token>` (or no token is configured at all).",
    "409": "Refused by the repository's state or configuration (nothing was pushed): the "
    "object is not there, the field is not allowed, the file exists, the gate would refuse "
    "the result ...",
    "413": "The body is over 64 KiB.",
    "422": "A field is missing or wrong (`field` names the first), or the `Idempotency-Key` "
    "was used for another request.",
    "502": "The forge or the job failed; the request may be sent again.",
    "503": "The queue is down, or too many bodies are in flight.",
    "504": "No worker answered in time. The job goes on: the same request again (the same "
    "`Idempotency-Key`) answers with its result.",
}


def _schemas(*models: type[BaseModel]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for model in models:
        schema = model.model_json_schema(ref_template=_REF)
        found.update(schema.pop("$defs", {}))
        found[model.__name__] = schema
    return found


def _json(model: str, description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": _REF.format(model=model)}}},
    }


def openapi_document() -> dict[str, Any]:
    responses: dict[str, Any] = {
        "200": _json("ChangeAnswer", "The pull request: opened now, or found open already."),
    }
    responses.update({status: _json("ErrorAnswer", text) for status, text in _ERRORS.items()})
    responses["401"]["headers"] = {
        "WWW-Authenticate": {"schema": {"type": "string"}, "description": "`Bearer`"}
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Ichor Bot change API",
            "version": __version__,
            "description": "Change pull requests for UIs and CLIs: the same branches, dedupe, "
            "safety checks and audit as the comment commands. Each token's name is the "
            "actor of the requests made with it.",
        },
        "paths": {
            CHANGES_PATH: {
                "post": {
                    "operationId": "createChange",
                    "summary": "Open (or find) the change pull request for one object",
                    "security": [{"bearer": []}],
                    "parameters": [
                        {
                            "name": "Idempotency-Key",
                            "in": "header",
                            "required": False,
                            "schema": {"type": "string", "minLength": 1, "maxLength": 200},
                            "description": "A retried request with the same key is the same "
                            "job. Without one, the same body from the same client within ten "
                            "minutes is.",
                        }
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {"$ref": _REF.format(model="ChangeBody")}
                            }
                        },
                    },
                    "responses": responses,
                }
            }
        },
        "components": {
            "schemas": _schemas(ChangeBody, ChangeAnswer, ErrorAnswer),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
