"""The recorded Swagger 2.0 descriptions of Gitea 1.27.1 and Forgejo 16.0.1, trimmed to what
the fake serves (``fixtures/forge-api``, made by ``scripts/trim_api_descriptions.py``), behind
:class:`tests.fakeforge.openapi.OpenApi`'s matching and validation."""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jsonschema import Draft4Validator

from tests.fakeforge.openapi import OpenApi, Operation, Problem

# The recorded descriptions trimmed to what this fake serves (scripts/trim_api_descriptions.py).
API_FIXTURES = Path(__file__).resolve().parents[3] / "fixtures/forge-api"
DESCRIPTIONS: dict[str, Path] = {
    "gitea": API_FIXTURES / "gitea-1.27.1.json",
    "forgejo": API_FIXTURES / "forgejo-16.0.1.json",
}
_PARAM_KEYS = ("type", "format", "enum", "items", "minimum", "maximum", "pattern", "maxLength")
_PROSE_ENUMS = ("CommitStatusState",)  # definitions whose values only their description lists


class Swagger2(OpenApi):
    """A Swagger 2.0 description behind :class:`OpenApi`'s matching and validation.

    Differences from OpenAPI 3 handled here: a body is a parameter ``in: body`` with a
    ``schema``; other parameters carry their type inline; ``$ref``s point at ``#/definitions``,
    ``#/parameters`` and ``#/responses``; paths are below ``basePath``.
    """

    greedy_params = frozenset()  # Gitea's templates have none

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.base_path: str = self.document.get("basePath", "")
        self.definitions = _with_prose_enums(copy.deepcopy(self.document.get("definitions", {})))
        self._closed_definitions = _closed(self.definitions)

    def _schema_root(self) -> dict[str, Any]:
        return {"definitions": self.definitions}

    def _param_schema(self, param: Mapping[str, Any]) -> Mapping[str, Any]:
        return {k: param[k] for k in _PARAM_KEYS if k in param}  # inline, as JSON Schema

    def response_schema(self, op: Operation, status: int) -> Mapping[str, Any] | None:
        response = op.responses.get(str(status))
        if response is None:
            return None
        schema = self._deref(response).get("schema")
        return schema if isinstance(schema, dict) else None

    def _check_response_body(self, schema: Mapping[str, Any], body: Any) -> list[Problem]:
        """Every object closed: the fake cannot invent fields the flavor lacks."""
        root = {"definitions": self._closed_definitions, "allOf": [schema]}
        validator = Draft4Validator(root, format_checker=self._format_checker)
        return [Problem("", "invalid", e.message[:200]) for e in validator.iter_errors(body)]


def _with_prose_enums(definitions: dict[str, Any]) -> dict[str, Any]:
    for name in _PROSE_ENUMS:
        schema = definitions.get(name)
        if isinstance(schema, dict) and "enum" not in schema:
            values = re.findall(r'"([a-z_]+)"', schema.get("description", ""))
            if values:
                schema["enum"] = values
    return definitions


def _closed(definitions: dict[str, Any]) -> dict[str, Any]:
    def close(node: Any) -> Any:
        if isinstance(node, list):
            return [close(x) for x in node]
        if not isinstance(node, dict):
            return node
        out = {k: close(v) for k, v in node.items()}
        if "properties" in node and "additionalProperties" not in node:
            out["additionalProperties"] = False
        return out

    return {name: close(schema) for name, schema in definitions.items()}


@functools.cache
def load(flavor: str) -> Swagger2:
    """The parsed description of ``flavor``, shared by every fake in the process."""
    return Swagger2(DESCRIPTIONS[flavor])
