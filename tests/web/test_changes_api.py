"""``POST /api/v1/changes`` through the Starlette app with a stub queue: bearer tokens
(compared in constant time, every one), 422s that name the field, one job per retried
request, the job's answer as HTTP, the audit of what is refused here, and the OpenAPI
document at ``/api/v1/openapi.json``."""

from __future__ import annotations

import copy
import hmac
from pathlib import Path
from typing import Any, cast

import pytest
from jsonschema import Draft202012Validator
from starlette.applications import Starlette

from bot.queueing.base import Outcome, QueuedDelivery, QueueUnavailableError
from bot.web.changes_api import ChangeApi
from bot.webhooks import ChangeApiEvent, event_from_dict
from tests.web.changes_stub import APPROVE, CLI, CREATE, UI, StubQueue, api_client, bearer

URL = "/api/v1/changes"


# ---------------------------------------------------------------------------- auth


@pytest.mark.parametrize(
    "headers",
    [
        {},
        bearer("not-a-token-of-ours-at-all"),
        bearer(UI[:-1]),  # a prefix of a real token
        bearer(""),
        {"Authorization": f"Basic {UI}"},
        {"Authorization": UI},
    ],
)
def test_without_a_valid_token_it_is_401_and_nothing_is_queued(
    tmp_path: Path, headers: dict[str, str]
) -> None:
    with api_client(tmp_path) as (client, queue, audit):
        response = client.post(URL, json=APPROVE, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json() == {"error": "no valid bearer token"}
    assert queue.submitted == [] and audit.recent() == []  # no actor, no record


def test_no_token_configured_is_401_for_everyone(tmp_path: Path) -> None:
    with api_client(tmp_path, api_tokens="") as (client, queue, _):
        response = client.post(URL, json=APPROVE, headers=bearer(UI))
    assert response.status_code == 401
    assert response.json() == {"error": "no API token is configured"}
    assert queue.submitted == []


def test_the_right_token_is_the_actor(tmp_path: Path) -> None:
    with api_client(tmp_path) as (client, queue, _):
        response = client.post(URL, json=APPROVE, headers=bearer(CLI))
    assert response.status_code == 200, response.text
    assert response.json() == {
        "pull_request_url": "https://github.example/o/r/pull/1",
        "branch": "ichor/approve-web-settings",
        "created": True,
    }
    (delivery,) = queue.submitted
    event = event_from_dict(delivery.event)
    assert isinstance(event, ChangeApiEvent)
    assert (event.actor, event.requester, event.verb) == ("cli", "maria", "approve")
    assert (event.kind, event.namespace, event.name) == ("ConfigMap", "web", "settings")
    assert event.fields == (("data.mode", "canary"),) and event.document is None
    assert delivery.forge == "github" and event.repo.full_name == "octo/gitops"


def test_every_token_is_compared_in_constant_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[tuple[bytes, bytes]] = []
    compare = hmac.compare_digest

    def recording(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return compare(a, b)

    monkeypatch.setattr(hmac, "compare_digest", recording)
    with api_client(tmp_path) as (client, _, _):
        assert client.post(URL, json=APPROVE, headers=bearer(UI)).status_code == 200
        assert len(compared) == 3  # the first token matched; the other two were still compared
        assert {len(a) for pair in compared for a in pair} == {32}  # digests: no length told
        compared.clear()
        assert client.post(URL, json=APPROVE, headers=bearer("x" * 40)).status_code == 401
        assert len(compared) == 3


# ---------------------------------------------------------------------------- validation


def changed(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``base`` with the dotted ``path`` set to ``value`` (``...`` deletes it)."""
    body = copy.deepcopy(base)
    *parents, last = path.split(".")
    node = body
    for key in parents:
        node = node[key]
    if value is ...:
        del node[last]
    else:
        node[last] = value
    return body


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (changed(APPROVE, "verb", ...), "verb"),
        (changed(APPROVE, "verb", "merge"), "verb"),
        (changed(APPROVE, "forge", "bitbucket"), "forge"),
        (changed(APPROVE, "repository", "octo"), "repository"),
        (changed(APPROVE, "repository", "octo/../x"), "repository"),
        (changed(APPROVE, "object.name", "Not_A_Name"), "object.name"),
        (changed(APPROVE, "object.namespace", "web/x"), "object.namespace"),
        (changed(APPROVE, "object.kind", "configmap"), "object.kind"),
        (changed(APPROVE, "object.extra", 1), "object.extra"),
        (changed(APPROVE, "object", ...), "object"),
        (changed(APPROVE, "colour", "blue"), "colour"),
        (changed(APPROVE, "target", "Prod!"), "target"),
        (changed(APPROVE, "fields", {"spec..x": "1"}), "fields.spec..x"),
        (changed(APPROVE, "fields", {"data.mode": 3}), "fields.data.mode"),
        (changed(APPROVE, "reason", "why"), "reason"),
        (changed(APPROVE, "requester", "a\nb"), "requester"),
        (changed(changed(APPROVE, "verb", "update"), "fields", {}), "fields"),
        (changed(changed(APPROVE, "verb", "delete"), "fields", {"a": "b"}), "fields"),
        (changed(CREATE, "document", ...), "document"),
        (changed(CREATE, "document.metadata.name", "a/b"), "document.metadata.name"),
        (changed(CREATE, "document.metadata", "x"), "document.metadata"),
        (changed(CREATE, "document.kind", "Kind.with.group"), "document.kind"),
        (changed(CREATE, "document.apiVersion", "a/b/c"), "document.apiVersion"),
        (changed(CREATE, "object", APPROVE["object"]), "object"),
        ({**APPROVE, "document": CREATE["document"]}, "document"),
        ([APPROVE], "body"),
    ],
)
def test_bad_input_is_422_naming_the_field(tmp_path: Path, body: Any, field: str) -> None:
    with api_client(tmp_path) as (client, queue, audit):
        response = client.post(URL, json=body, headers=bearer(UI))
    assert response.status_code == 422, response.text
    answer = response.json()
    assert answer["field"] == field, answer
    assert answer["error"].startswith(f"{field}: ")
    assert answer["errors"][0] == {"field": field, "message": answer["error"][len(field) + 2 :]}
    assert queue.submitted == []
    (record,) = audit.recent()
    assert record.actor == "ui" and record.result.startswith(f"refused: 422 {field}: ")


def test_a_body_that_is_not_json_is_400_and_one_over_64_kib_is_413(tmp_path: Path) -> None:
    with api_client(tmp_path) as (client, queue, audit):
        assert client.post(URL, content=b"{nope", headers=bearer(UI)).status_code == 400
        big = {**CREATE, "document": {**CREATE["document"], "data": {"x": "a" * (64 << 10)}}}
        assert client.post(URL, json=big, headers=bearer(UI)).status_code == 413
    assert queue.submitted == []
    assert [r.result.split(":")[1].split()[0] for r in audit.recent()] == ["413", "400"]


def test_a_cluster_scoped_object_is_named_by_null_or_underscore(tmp_path: Path) -> None:
    with api_client(tmp_path) as (client, queue, _):
        for namespace in (None, "_"):
            body = changed(APPROVE, "object.namespace", namespace)
            body["fields"] = {"data.mode": str(namespace)}  # two requests, two jobs
            assert client.post(URL, json=body, headers=bearer(UI)).status_code == 200
    events = [event_from_dict(d.event) for d in queue.submitted]
    assert [getattr(e, "namespace", "?") for e in events] == [None, None]


def test_create_carries_the_whole_document(tmp_path: Path) -> None:
    with api_client(tmp_path) as (client, queue, _):
        response = client.post(URL, json=CREATE, headers=bearer(UI))
    assert response.status_code == 200, response.text
    assert response.json()["branch"] == "ichor/create-_cluster-node-2"
    event = event_from_dict(queue.submitted[0].event)
    assert isinstance(event, ChangeApiEvent) and event.document is not None
    assert (event.kind, event.name, event.target, event.requester) == (
        "TalosMachine",
        "node-2",
        "prod",
        "ui",  # no requester given: the token's name
    )
    assert '"role":"worker"' in event.document


# ---------------------------------------------------------------------------- one job


def test_a_retried_request_is_one_job(tmp_path: Path) -> None:
    with api_client(tmp_path) as (client, queue, _):
        first = client.post(URL, json=APPROVE, headers=bearer(UI))
        # The same request, its keys in another order: the same digest, the same job.
        again = client.post(URL, json=dict(reversed(list(APPROVE.items()))), headers=bearer(UI))
        other = client.post(URL, json=APPROVE, headers=bearer(CLI))
    assert first.json() == again.json() and first.status_code == again.status_code == 200
    assert other.status_code == 200
    assert [o.value for o in queue.outcomes] == ["queued", "duplicate", "queued"]
    assert len(queue.jobs) == 2  # another client's same request is its own job


def test_without_a_key_the_same_body_is_one_job_for_ten_minutes(tmp_path: Path) -> None:
    with api_client(tmp_path) as (client, queue, _):
        owner = cast(Starlette, client.app).state.changes
        assert isinstance(owner, ChangeApi)
        owner.clock = lambda: 1_000_000.0
        client.post(URL, json=APPROVE, headers=bearer(UI))
        owner.clock = lambda: 1_000_000.0 + 600
        client.post(URL, json=APPROVE, headers=bearer(UI))
    assert [o.value for o in queue.outcomes] == ["queued", "queued"]


def test_an_idempotency_key_names_the_job(tmp_path: Path) -> None:
    with api_client(tmp_path) as (client, queue, _):
        keyed = {**bearer(UI), "Idempotency-Key": "4f1c-retry-me"}
        first = client.post(URL, json=APPROVE, headers=keyed)
        again = client.post(URL, json=APPROVE, headers=keyed)
        reused = client.post(URL, json=changed(APPROVE, "object.name", "other"), headers=keyed)
        bad = client.post(URL, json=APPROVE, headers={**keyed, "Idempotency-Key": "a b"})
    assert first.status_code == again.status_code == 200
    assert reused.status_code == 422 and reused.json()["field"] == "Idempotency-Key"
    assert bad.status_code == 422 and bad.json()["field"] == "Idempotency-Key"
    assert [o.value for o in queue.outcomes] == ["queued", "duplicate", "duplicate"]


# ---------------------------------------------------------------------------- answers


def summary(result: str, **extra: Any) -> Any:
    def respond(event: dict[str, Any]) -> dict[str, Any]:
        return {"request": event["request"], "result": result, **extra}

    return respond


@pytest.mark.parametrize(
    ("respond", "status", "expected"),
    [
        (
            summary("pr-existing", pull_request_url="https://x/pull/3", branch="ichor/b"),
            200,
            {"pull_request_url": "https://x/pull/3", "branch": "ichor/b", "created": False},
        ),
        (
            summary("refused", reason="data.x is not among the fields", branch="ichor/b"),
            409,
            {"error": "data.x is not among the fields", "branch": "ichor/b"},
        ),
        (summary("error", reason="GitHub GET /repos/o/r: 404"), 502, None),
        (lambda event: "nonsense", 502, None),
    ],
)
def test_the_jobs_answer_becomes_the_http_answer(
    tmp_path: Path, respond: Any, status: int, expected: dict[str, Any] | None
) -> None:
    with api_client(tmp_path, StubQueue(respond)) as (client, _, _):
        response = client.post(URL, json=APPROVE, headers=bearer(UI))
    assert response.status_code == status, response.text
    if expected is not None:
        assert response.json() == expected
    assert "error" in response.json() or status == 200


def test_a_failed_job_is_502_and_a_silent_worker_504(tmp_path: Path) -> None:
    with api_client(tmp_path, StubQueue(state="failed")) as (client, _, _):
        assert client.post(URL, json=APPROVE, headers=bearer(UI)).status_code == 502
    with api_client(tmp_path, StubQueue(state="started"), api_wait_seconds=0.3) as (
        client,
        queue,
        _,
    ):
        response = client.post(URL, json=APPROVE, headers=bearer(UI))
    assert response.status_code == 504
    assert response.json()["job"] == queue.jobs[0] and "the job goes on" in response.json()["error"]


def test_a_spooled_request_is_504_at_once(tmp_path: Path) -> None:
    class Down(StubQueue):
        def submit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]:
            raise QueueUnavailableError("connection refused")

    with api_client(tmp_path, Down(), api_wait_seconds=30) as (client, _, _):
        response = client.post(URL, json=APPROVE, headers=bearer(UI))
    assert response.status_code == 504 and "kept" in response.json()["error"]
    assert len(list((tmp_path / "data" / "spool").iterdir())) == 1  # it runs once Redis is back


def test_the_status_pages_basic_auth_leaves_the_api_to_its_tokens(tmp_path: Path) -> None:
    with api_client(tmp_path, status_auth="ops:s3cret-pass") as (client, _, _):
        assert client.get("/").status_code == 401
        assert client.post(URL, json=APPROVE, headers=bearer(UI)).status_code == 200
        assert client.get("/api/v1/openapi.json").status_code == 200


# ---------------------------------------------------------------------------- OpenAPI


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for value in node.values() for r in refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in refs(value)]
    return []


def test_the_openapi_document_describes_the_endpoint(tmp_path: Path) -> None:
    with api_client(tmp_path) as (client, _, _):
        response = client.get("/api/v1/openapi.json")  # no token needed to read it
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.1")
    post = document["paths"][URL]["post"]
    assert post["security"] == [{"bearer": []}]
    assert document["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
    }
    assert {"200", "401", "409", "422", "502", "504"} <= set(post["responses"])
    assert any(p["name"] == "Idempotency-Key" for p in post["parameters"])
    schemas = document["components"]["schemas"]
    for ref in refs(document):
        assert ref.startswith("#/components/schemas/") and ref.rsplit("/", 1)[1] in schemas, ref
    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)
    body = schemas["ChangeBody"]
    assert body["additionalProperties"] is False
    assert set(body["required"]) == {"forge", "repository", "verb"}
    assert set(body["properties"]["verb"]["enum"]) == {
        "approve",
        "reject",
        "update",
        "delete",
        "create",
    }
    # The examples the README shows are requests the schema accepts.
    root = {"components": document["components"], "$ref": "#/components/schemas/ChangeBody"}
    for example in (APPROVE, CREATE):
        Draft202012Validator(root).validate(example)
