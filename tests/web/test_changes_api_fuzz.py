"""Property: whatever a client sends, ``POST /api/v1/changes`` answers with a status its
OpenAPI document lists, never a 5xx of its own making (the stub queue answers every job).

Neither hypothesis nor schemathesis is installed, so a seeded generator walks the request
schema of the served OpenAPI document itself: values that fit it, values that break it
(wrong types, lengths past the limits, missing and extra keys, odd characters), and
mutations of valid requests, with valid, wrong and missing tokens and idempotency keys.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

from tests.web.changes_stub import APPROVE, CREATE, UI, api_client, bearer

REQUESTS = 600
SEED = 20_240_514
ODD = ["", " ", "_", "..", "a/b", "ü", "\u202e", "\x00", "-x-", "A" * 300, "ok", "web", "v1"]
JSON_ATOMS: list[Any] = [None, True, False, 0, -1, 2**70, 1.5, "", "x", [], {}]


class Generator:
    def __init__(self, document: dict[str, Any], seed: int) -> None:
        self.rng = random.Random(seed)
        self.schemas: dict[str, Any] = document["components"]["schemas"]

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def value(self, schema: dict[str, Any], depth: int = 0) -> Any:
        """A value for ``schema``: usually one that fits, sometimes one that does not."""
        if "$ref" in schema:
            return self.value(self.schemas[schema["$ref"].rsplit("/", 1)[1]], depth)
        if self.chance(0.06) or depth > 6:
            return self.rng.choice([*JSON_ATOMS, *ODD])  # the wrong type, or an odd value
        if "anyOf" in schema:
            return self.value(self.rng.choice(schema["anyOf"]), depth)
        if "enum" in schema:
            return self.rng.choice(
                [*schema["enum"], "nope"] if self.chance(0.1) else schema["enum"]
            )
        kind = schema.get("type")
        if kind == "string":
            return self.string(schema)
        if kind == "boolean":
            return self.chance(0.5)
        if kind == "null":
            return None
        if kind == "object":
            return self.mapping(schema, depth)
        return self.json(depth)

    def string(self, schema: dict[str, Any]) -> str:
        examples = schema.get("examples") or []
        limit = int(schema.get("maxLength", 40))
        if examples and self.chance(0.6):
            return str(self.rng.choice(examples))
        if self.chance(0.1):
            return "x" * (limit + self.rng.randint(1, 5))  # past the limit
        alphabet = "abcz019-._/AZ ~\n\t:@\\"
        return "".join(self.rng.choice(alphabet) for _ in range(self.rng.randint(0, 12)))

    def mapping(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        properties: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        out: dict[str, Any] = {}
        for name, sub in properties.items():
            if (name in required and not self.chance(0.05)) or self.chance(0.4):
                out[name] = self.value(sub, depth + 1)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):  # a map: fields
            for _ in range(self.rng.randint(0, 3)):
                out[self.rng.choice(["data.mode", "spec.role", "a..b", "x", ""])] = self.value(
                    extra, depth + 1
                )
        elif extra is not False or self.chance(0.05):
            for _ in range(self.rng.randint(0, 2)):
                out[self.rng.choice(ODD)] = self.json(depth + 1)
        return out

    def json(self, depth: int) -> Any:
        if depth > 5 or self.chance(0.5):
            return self.rng.choice([*JSON_ATOMS, *ODD])
        if self.chance(0.5):
            return [self.json(depth + 1) for _ in range(self.rng.randint(0, 3))]
        return {self.rng.choice(ODD): self.json(depth + 1) for _ in range(self.rng.randint(0, 3))}

    def mutated(self, base: dict[str, Any]) -> dict[str, Any]:
        """A valid request with one part changed."""
        body = copy.deepcopy(base)
        node: Any = body
        while isinstance(node, dict) and node and self.chance(0.5):
            key = self.rng.choice(sorted(node))
            if not isinstance(node[key], dict):
                break
            node = node[key]
        if isinstance(node, dict) and node:
            key = self.rng.choice(sorted(node))
            if self.chance(0.3):
                del node[key]
            else:
                node[key] = self.rng.choice([*JSON_ATOMS, *ODD, self.json(0)])
        return body

    def request(self, body_schema: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
        pick = self.rng.random()
        if pick < 0.35:
            body: Any = self.value(body_schema)
        elif pick < 0.85:
            body = self.mutated(self.rng.choice([APPROVE, CREATE]))
        elif pick < 0.95:
            body = self.rng.choice([APPROVE, CREATE])
        else:
            body = self.json(0)
        raw = json.dumps(body).encode()
        if self.chance(0.03):
            raw = raw[: self.rng.randint(0, len(raw))]  # cut short: not JSON
        headers = bearer(UI) if self.chance(0.9) else self.rng.choice([{}, bearer("nope" * 5)])
        if self.chance(0.2):
            headers["Idempotency-Key"] = self.rng.choice(["k1", "k2", "x" * 201, "a b", "a\tb"])
        return raw, headers


def test_no_request_gets_a_5xx(tmp_path: Path) -> None:
    with api_client(tmp_path) as (client, queue, _):
        document = client.get("/api/v1/openapi.json").json()
        operation = document["paths"]["/api/v1/changes"]["post"]
        listed = {int(status) for status in operation["responses"]}
        schema = operation["requestBody"]["content"]["application/json"]["schema"]
        generator = Generator(document, SEED)
        seen: dict[int, int] = {}
        for number in range(REQUESTS):
            raw, headers = generator.request(schema)
            headers["Content-Type"] = "application/json"
            response = client.post("/api/v1/changes", content=raw, headers=headers)
            status = response.status_code
            seen[status] = seen.get(status, 0) + 1
            assert status < 500 and status in listed, (number, raw[:300], response.text)
            assert isinstance(response.json(), dict)
    # The generator reaches every kind of answer a client can cause here, valid ones too.
    assert {200, 401, 422} <= set(seen), seen
    assert seen[200] >= 50 and seen[422] >= 100, seen
    assert len(queue.jobs) >= 10  # valid requests of several shapes reached the queue
