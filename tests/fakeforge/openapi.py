"""GitHub's recorded REST description: route matching, request validation, response shapes.

The description is OpenAPI 3.0.3: ``fixtures/forge-api/github-rest.json``, the recorded one
(``shared/forge-data/github/openapi``) trimmed to the path items the fake serves by
``scripts/trim_api_descriptions.py`` (see ``fixtures/forge-api/PROVENANCE.md``).
Its schemas are JSON Schema draft 4 plus ``nullable``; :func:`to_json_schema` rewrites
``nullable`` so :mod:`jsonschema` (Draft4Validator) can check them, and ``$ref``s resolve
against the document's own ``components``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jsonschema
from jsonschema import Draft4Validator, FormatChecker
from jsonschema.exceptions import ValidationError

ROOT = Path(__file__).resolve().parents[2]
DESCRIPTION = ROOT / "fixtures/forge-api/github-rest.json"
DOCS = "https://docs.github.com/rest"

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# Parameters whose values may hold slashes (a file path, a ref such as heads/feature/x).
_GREEDY_PARAMS = frozenset({"path", "ref"})
_RFC3339 = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$",
)


@dataclass(frozen=True)
class Param:
    name: str
    location: str  # path, query, header
    required: bool
    schema: Mapping[str, Any]


@dataclass(frozen=True)
class Operation:
    method: str  # upper case
    template: str  # "/repos/{owner}/{repo}/check-runs/{check_run_id}"
    operation_id: str
    params: tuple[Param, ...]
    body_schema: Mapping[str, Any] | None  # JSON Schema (converted), None: no body declared
    body_required: bool
    responses: Mapping[str, Any]  # raw, status -> response object
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Problem:
    """One way a request departs from the description, in GitHub's error-item shape."""

    field: str
    code: str  # missing_field, invalid, unprocessable
    message: str

    def as_github(self, resource: str) -> dict[str, Any]:
        item: dict[str, Any] = {"resource": resource, "code": self.code, "message": self.message}
        if self.field:
            item["field"] = self.field
        return item


def join_problems(problems: list[Problem]) -> str:
    """Problems as one line, for a problem list."""
    return "; ".join(p.message for p in problems)


class RouteError(Exception):
    """No operation answers this method and path (GitHub: 404)."""


@dataclass
class _Route:
    template: str
    pattern: re.Pattern[str]
    names: tuple[str, ...]
    literal: int  # characters outside {params}: more specific routes win
    operations: dict[str, Operation]


def to_json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema → JSON Schema draft 4: ``nullable`` becomes a ``null`` type."""
    if isinstance(node, list):
        return [to_json_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: (v if k in {"enum", "example", "examples", "default", "required"} else to_json_schema(v))
        for k, v in node.items()
        if k not in {"nullable", "x-github", "discriminator", "readOnly", "writeOnly"}
    }
    if k_props := node.get("properties"):
        out["properties"] = {name: to_json_schema(sub) for name, sub in k_props.items()}
    if node.get("nullable") is True:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        elif kind is None:
            return {"anyOf": [{"type": "null"}, out]}
    return out


def _format_checker() -> FormatChecker:
    checker = FormatChecker(formats=())

    @checker.checks("date-time", raises=ValueError)
    def _date_time(value: object) -> bool:
        return not isinstance(value, str) or bool(_RFC3339.match(value))

    return checker


class OpenApi:
    """The description, indexed for matching and validating requests."""

    # Path parameters that take the rest of the path, slashes included.
    greedy_params: frozenset[str] = _GREEDY_PARAMS

    def __init__(self, path: Path = DESCRIPTION) -> None:
        self.path = path
        self.document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        self.components: dict[str, Any] = to_json_schema(self.document.get("components", {}))
        self._format_checker = _format_checker()
        self._routes: list[_Route] = []
        for template, item in self.document["paths"].items():
            shared = item.get("parameters", [])
            ops: dict[str, Operation] = {}
            for method in HTTP_METHODS:
                raw = item.get(method)
                if raw is None:
                    continue
                ops[method.upper()] = self._operation(method.upper(), template, raw, shared)
            pattern, names, literal = _compile(template, self.greedy_params)
            self._routes.append(_Route(template, pattern, names, literal, ops))
        self._routes.sort(key=lambda r: -r.literal)

    def _schema_root(self) -> dict[str, Any]:
        """Where the converted schemas' ``$ref``s point into."""
        return {"components": self.components}

    # -- building -----------------------------------------------------------------------
    def _deref(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        seen = 0
        while "$ref" in node:
            node = self.resolve(node["$ref"], raw=True)
            seen += 1
            if seen > 20:
                raise ValueError("$ref loop")
        return node

    def resolve(self, ref: str, *, raw: bool = False) -> Any:
        if not ref.startswith("#/"):
            raise ValueError(f"only local $refs are supported: {ref}")
        node: Any = self.document if raw else self._schema_root()
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def _operation(
        self, method: str, template: str, raw: Mapping[str, Any], shared: list[Any]
    ) -> Operation:
        params: dict[tuple[str, str], Param] = {}
        body_schema: Mapping[str, Any] | None = None
        body_required = False
        if "requestBody" in raw:
            body = self._deref(raw["requestBody"])
            body_required = bool(body.get("required", False))
            media = body.get("content", {}).get("application/json")
            if media is not None:
                body_schema = to_json_schema(media.get("schema", {}))
        for p in [*shared, *raw.get("parameters", [])]:
            p = self._deref(p)
            if p["in"] == "body":  # Swagger 2.0: the body is a parameter
                body_schema, body_required = p.get("schema", {}), bool(p.get("required"))
                continue
            if p["in"] == "formData":
                continue  # Swagger 2.0 uploads: no operation a fake serves takes them
            params[(p["in"], p["name"])] = Param(
                name=p["name"],
                location=p["in"],
                required=bool(p.get("required", p["in"] == "path")),
                schema=self._param_schema(p),
            )
        return Operation(
            method=method,
            template=template,
            operation_id=raw.get("operationId", f"{method} {template}"),
            params=tuple(params.values()),
            body_schema=body_schema,
            body_required=body_required,
            responses=raw.get("responses", {}),
        )

    def _param_schema(self, param: Mapping[str, Any]) -> Mapping[str, Any]:
        return to_json_schema(param.get("schema", {}))  # type: ignore[no-any-return]

    # -- matching -----------------------------------------------------------------------
    @property
    def operations(self) -> Iterator[Operation]:
        for route in self._routes:
            yield from route.operations.values()

    def match(self, method: str, raw_path: str) -> tuple[Operation, dict[str, str]]:
        """The operation for ``method raw_path`` and its (percent-decoded) path parameters."""
        method = method.upper()
        path_matched = False
        for route in self._routes:
            m = route.pattern.fullmatch(raw_path)
            if m is None:
                continue
            path_matched = True
            op = route.operations.get(method)
            if op is None:
                continue
            return op, {name: unquote(m.group(i + 1)) for i, name in enumerate(route.names)}
        if path_matched:
            raise RouteError(f"no {method} operation for {raw_path} in the description")
        raise RouteError(f"no path template of the description matches {raw_path}")

    # -- validation ---------------------------------------------------------------------
    def _validator(self, schema: Mapping[str, Any]) -> Draft4Validator:
        # $refs ("#/components/...") resolve against this root; draft 4 ignores the unknown
        # "components" keyword, so only allOf applies to the instance.
        root = {**self._schema_root(), "allOf": [schema]}
        return Draft4Validator(root, format_checker=self._format_checker)

    def check_params(
        self, op: Operation, values: Mapping[str, str], location: str
    ) -> list[Problem]:
        problems: list[Problem] = []
        for param in op.params:
            if param.location != location:
                continue
            if param.name not in values:
                if param.required:
                    problems.append(
                        Problem(param.name, "missing_field", f"{location} parameter is required")
                    )
                continue
            value = _coerce(values[param.name], param.schema)
            for err in self._validator(param.schema).iter_errors(value):
                where = f"{location} parameter {param.name}"
                problems.append(Problem(param.name, "invalid", _describe(err, where)))
        return problems

    def check_body(self, op: Operation, body: Any, *, present: bool) -> list[Problem]:
        if op.body_schema is None:
            return []
        if not present:
            if op.body_required:
                return [Problem("", "missing_field", "a JSON request body is required")]
            return []
        return self.check(op.body_schema, body)

    def check(self, schema: Mapping[str, Any], instance: Any) -> list[Problem]:
        errors = sorted(
            self._validator(schema).iter_errors(instance),
            key=lambda e: (list(map(str, e.absolute_path)), e.validator),
        )
        return [Problem(_field(err), _code(err), _describe(err)) for err in errors]

    def response_schema(self, op: Operation, status: int) -> Mapping[str, Any] | None:
        response = op.responses.get(str(status))
        if response is None:
            return None
        response = self._deref(response)
        media = response.get("content", {}).get("application/json")
        if media is None or "schema" not in media:
            return None
        schema: Mapping[str, Any] | None = to_json_schema(media["schema"])
        return schema

    def check_response(self, op: Operation, status: int, body: Any) -> list[Problem]:
        """Problems of a response body against the description (strict: ``required`` too)."""
        schema = self.response_schema(op, status)
        if schema is None:
            if str(status) in op.responses:
                return []
            return [Problem("", "invalid", f"status {status} is not described for {op.template}")]
        return self._check_response_body(schema, body)

    def _check_response_body(self, schema: Mapping[str, Any], body: Any) -> list[Problem]:
        return self.check(schema, body)

    # -- shapes -------------------------------------------------------------------------
    def skeleton(self, schema: Mapping[str, Any], depth: int = 0) -> Any:
        """A minimal instance of ``schema``: every required property, placeholder values.

        Nullable values are ``None``; strings take their first enum value or a placeholder
        matching their format; arrays are empty. Callers overlay the values that matter.
        """
        while "$ref" in schema:
            schema = self.resolve(schema["$ref"])
        if depth > 12:
            return None
        kind = schema.get("type")
        if isinstance(kind, list):
            if "null" in kind and depth > 0:  # the top level is asked for on purpose
                return None
            kind = next(k for k in kind if k != "null")
        if "anyOf" in schema or "oneOf" in schema:
            options = schema.get("anyOf") or schema.get("oneOf") or []
            if depth > 0 and any(o.get("type") == "null" for o in options):
                return None
            options = [o for o in options if o.get("type") != "null"]
            return self.skeleton(options[0], depth)
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                value = self.skeleton(part, depth + 1)
                if isinstance(value, dict):
                    merged.update(value)
                elif value is not None or not merged:
                    return value
            return merged
        if "enum" in schema:
            return schema["enum"][0]
        if kind == "object" or (kind is None and "properties" in schema):
            props = schema.get("properties", {})
            return {
                name: self.skeleton(props.get(name, {}), depth + 1)
                for name in schema.get("required", [])
            }
        if kind == "array":
            return []
        if kind == "integer":
            return 0
        if kind == "number":
            return 0
        if kind == "boolean":
            return False
        if kind == "string":
            fmt = schema.get("format")
            if fmt == "date-time":
                return "1970-01-01T00:00:00Z"
            if fmt in {"uri", "uri-template"}:
                return "https://example.invalid/"
            if fmt == "email":
                return "nobody@example.invalid"
            return ""
        return None

    def response_skeleton(self, op: Operation, status: int) -> Any:
        schema = self.response_schema(op, status)
        if schema is None:
            return None
        return self.skeleton(schema)


@cache
def load(path: Path = DESCRIPTION) -> OpenApi:
    """The parsed description, shared by every fake in the process (it is read-only)."""
    return OpenApi(path)


def overlay(base: Any, top: Any) -> Any:
    """``top`` over ``base``: dicts merge key by key, anything else in ``top`` replaces."""
    if isinstance(base, dict) and isinstance(top, dict):
        out = copy.copy(base)
        for key, value in top.items():
            out[key] = overlay(base.get(key), value)
        return out
    return copy.deepcopy(top)


def overlay_object(base: Any, top: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`overlay` for an object body, typed as one (a mapping on top gives a dict)."""
    out = overlay(base, dict(top))
    assert isinstance(out, dict)
    return out


def _compile(template: str, greedy: frozenset[str]) -> tuple[re.Pattern[str], tuple[str, ...], int]:
    """A template's pattern (one numbered group per parameter, as a name like
    ``repository-id`` is no group name), its parameter names and literal length."""
    parts: list[str] = []
    names: list[str] = []
    literal = 0
    for piece in re.split(r"(\{[^}]+\})", template):
        if piece.startswith("{") and piece.endswith("}"):
            name = piece[1:-1]
            names.append(name)
            parts.append("(.+)" if name in greedy else "([^/]+)")
        else:
            parts.append(re.escape(piece))
            literal += len(piece)
    return re.compile("".join(parts)), tuple(names), literal


def _coerce(value: str, schema: Mapping[str, Any]) -> Any:
    """A path or query string as the JSON value its schema expects, when it reads as one."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "integer" in kinds and re.fullmatch(r"-?\d+", value):
        return int(value)
    if "number" in kinds:
        try:
            return float(value)
        except ValueError:
            return value
    if "boolean" in kinds and value in {"true", "false"}:
        return value == "true"
    return value


def _field(err: ValidationError) -> str:
    return ".".join(str(p) for p in err.absolute_path)


def _code(err: ValidationError) -> str:
    if err.validator == "required":
        return "missing_field"
    if err.validator == "additionalProperties":
        return "unprocessable"
    return "invalid"


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(err: ValidationError, where: str | None = None) -> str:
    """A one-line message that never dumps a whole (possibly huge) instance."""
    where = where or _field(err) or "body"
    rule = err.validator
    value: Any = err.instance
    arg = err.validator_value
    if rule == "maxItems":
        return f"{where}: {len(value)} items, at most {arg} allowed"
    if rule == "minItems":
        return f"{where}: {len(value)} items, at least {arg} required"
    if rule == "maxLength":
        return f"{where}: {len(value)} characters, at most {arg} allowed"
    if rule == "minLength":
        return f"{where}: {len(value)} characters, at least {arg} required"
    if rule == "enum":
        return f"{where}: {_short(value)} is not one of {_short(arg, 200)}"
    if rule == "type":
        return f"{where}: {_short(value)} is not of type {_short(arg)}"
    if rule == "format":
        return f"{where}: {_short(value)} is not a valid {arg}"
    if rule in {"anyOf", "oneOf"}:
        best = jsonschema.exceptions.best_match(err.context) if err.context else None
        detail = f" ({_describe(best)})" if best is not None else ""
        return f"{where}: matches none of the {rule} alternatives{detail}"
    if rule in {"required", "additionalProperties"}:
        return f"{where}: {err.message}"
    return f"{where}: {rule} {_short(arg)} failed for {_short(value)}"
