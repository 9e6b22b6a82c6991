"""What ``POST /api/v1/changes`` accepts and answers (design.md 6.5), as pydantic models: the
request is checked whole here, in the web process, before anything is queued, and every
problem names its field (``object.name``, ``document.metadata.name``, ``repository`` ...).

Names reach API paths, refs and file paths in the job: they are held to the forge's and
Kubernetes' own rules (the same checks as the webhooks and the comment commands), and every
text is bounded, so a request cannot be larger or stranger than the job expects.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from pydantic import field_validator as check

from bot.commands.args import (
    valid_field,
    valid_kind,
    valid_name,
    valid_namespace,
    valid_target,
    value_problem,
)
from bot.repos import ForgeKind, RepoRef
from bot.repos.names import RepositoryCheck, gitea_repository, github_repository, gitlab_repository
from bot.webhooks import ApiVerb, ChangeApiEvent

MAX_FIELDS = 50
MAX_VALUE_CHARS = 1_000
MAX_ERRORS = 20  # problems listed in one answer
REPOSITORY_CHECKS: dict[str, RepositoryCheck] = {
    "github": github_repository,
    "gitlab": gitlab_repository,
    "gitea": gitea_repository,
}
_VERSION = re.compile(r"v[0-9]+(?:(?:alpha|beta)[0-9]+)?|[a-z0-9]{1,63}")
Text = Annotated[str, StringConstraints(max_length=MAX_VALUE_CHARS)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ObjectRef(_Strict):
    """A managed object by identity; ``namespace`` null or ``"_"`` for a cluster-scoped one."""

    kind: str = Field(max_length=317, examples=["ConfigMap", "Deployment.apps"])
    namespace: str | None = Field(default=None, max_length=63, examples=["web", "_"])
    name: str = Field(max_length=253, examples=["settings"])

    @check("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        if not valid_kind(value):
            raise ValueError("not a kind (`Kind` or `Kind.group`)")
        return value

    @check("namespace")
    @classmethod
    def _namespace(cls, value: str | None) -> str | None:
        if value is None or value == "_":
            return None
        if not valid_namespace(value):
            raise ValueError('not a Kubernetes namespace (or "_" for a cluster-scoped object)')
        return value

    @check("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not valid_name(value):
            raise ValueError("not a Kubernetes object name")
        return value


class ChangeBody(_Strict):
    """A change request: what to change, where, and who asked."""

    forge: Literal["github", "gitlab", "gitea"]
    repository: str = Field(max_length=300, examples=["octo/gitops"])
    target: str | None = Field(
        default=None, max_length=63, description="the target's name; needed when several hold it"
    )
    verb: ApiVerb
    object: ObjectRef | None = Field(
        default=None, description="approve, reject, update, delete: the object by identity"
    )
    document: dict[str, Any] | None = Field(
        default=None,
        description="create: the whole object (apiVersion, kind, metadata.name ...), written "
        "to the strict target's `approval.newFilePath/<name>.yaml`",
        json_schema_extra={"required": ["apiVersion", "kind", "metadata"]},
    )
    fields: dict[str, Text] = Field(
        default_factory=dict,
        max_length=MAX_FIELDS,
        description="approve, update: dotted field → value, among the target's `approval.fields`",
    )
    reason: Text = Field(default="", description="reject: why (the target's reasonField)")
    requester: str | None = Field(
        default=None, max_length=100, description="who asked (the token's name when absent)"
    )

    @check("target")
    @classmethod
    def _target(cls, value: str | None) -> str | None:
        if value is not None and not valid_target(value):
            raise ValueError("not a target name")
        return value

    @check("requester")
    @classmethod
    def _requester(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or not value.isprintable()):
            raise ValueError("empty, or holds a control character")
        return value

    @check("reason")
    @classmethod
    def _reason(cls, value: str) -> str:
        problem = value_problem(value, lines=True)
        if problem is not None:
            raise ValueError(problem)
        return value


class ChangeAnswer(BaseModel):
    """The pull request that carries the change; ``created`` false: it was already open."""

    pull_request_url: str
    branch: str
    created: bool


class FieldProblem(BaseModel):
    field: str
    message: str


class ErrorAnswer(BaseModel):
    """Why not: ``field`` names the first bad field of a 422; ``job`` a 504's job."""

    error: str
    field: str | None = None
    errors: list[FieldProblem] | None = None
    branch: str | None = None
    job: str | None = None


Problems = list[tuple[str, str]]


def read_body(raw: bytes) -> ChangeBody | Problems | None:
    """The checked request, its problems (field, message), or None when it is not JSON."""
    try:
        body = ChangeBody.model_validate_json(raw)
    except ValidationError as exc:
        problems = [(_where(e["loc"]), _message(e["msg"])) for e in exc.errors()]
        if any(e["type"] == "json_invalid" for e in exc.errors()):
            return None
        return problems
    found = request_problems(body)
    return found or body


def request_problems(body: ChangeBody) -> Problems:
    """What one field's own rules cannot see: the repository by its forge's rules, and which
    parts each verb takes."""
    problems: Problems = []
    problem = REPOSITORY_CHECKS[body.forge](body.repository)
    if problem is not None:
        problems.append(("repository", problem))
    verb = body.verb
    if verb == "create":
        if body.object is not None:
            problems.append(("object", "not used with create: the document names the object"))
        if body.document is None:
            problems.append(("document", "required for create"))
        else:
            problems += document_problems(body.document)
    else:
        if body.object is None:
            problems.append(("object", f"required for {verb}"))
        if body.document is not None:
            problems.append(("document", "used with create only"))
    if body.fields and verb not in ("approve", "update"):
        problems.append(("fields", "used with approve and update only"))
    if verb == "update" and not body.fields:
        problems.append(("fields", "an update sets at least one field"))
    problems += [
        (f"fields.{key}", "not a dotted field path") for key in body.fields if not valid_field(key)
    ]
    problems += [
        (f"fields.{key}", problem)
        for key, value in body.fields.items()
        if (problem := value_problem(value)) is not None
    ]
    if body.reason and verb != "reject":
        problems.append(("reason", "used with reject only"))
    return problems


def document_problems(document: Mapping[str, Any]) -> Problems:
    problems: Problems = []
    api_version, kind = document.get("apiVersion"), document.get("kind")
    if not isinstance(api_version, str) or not _api_version(api_version):
        problems.append(("document.apiVersion", "required: `version` or `group/version`"))
    if not isinstance(kind, str) or "." in kind or not valid_kind(kind):
        problems.append(("document.kind", "required: a kind (`Deployment`)"))
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        return [*problems, ("document.metadata", "required: an object with a name")]
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if not isinstance(name, str) or not valid_name(name):
        problems.append(("document.metadata.name", "required: a Kubernetes object name"))
    if namespace is not None and (not isinstance(namespace, str) or not valid_namespace(namespace)):
        problems.append(("document.metadata.namespace", "not a Kubernetes namespace"))
    return problems


def _api_version(text: str) -> bool:
    group, _, version = text.rpartition("/")
    return _VERSION.fullmatch(version) is not None and (not group or valid_name(group))


def request_digest(actor: str, body: ChangeBody) -> str:
    """SHA-256 of who asked and what, in one canonical form: the same request retried has the
    same digest whatever its key order or spacing."""
    canonical = orjson.dumps(body.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(actor.encode() + b"\n" + canonical).hexdigest()


def to_event(actor: str, body: ChangeBody, digest: str) -> ChangeApiEvent:
    """The job's event; for create, the identity is the document's."""
    obj, document = body.object, body.document
    if document is not None:
        metadata = document["metadata"]
        kind, name = str(document["kind"]), str(metadata["name"])
        namespace = metadata.get("namespace") or None
        text: str | None = orjson.dumps(document).decode()
    else:
        assert obj is not None  # request_problems said so
        kind, namespace, name, text = obj.kind, obj.namespace, obj.name, None
    return ChangeApiEvent(
        repo=RepoRef(ForgeKind(body.forge), body.repository),
        actor=actor,
        requester=body.requester or actor,
        verb=body.verb,
        target=body.target,
        kind=kind,
        namespace=namespace,
        name=name,
        document=text,
        fields=tuple(body.fields.items()),
        reason=body.reason,
        request=digest,
    )


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "body"


def _message(text: str) -> str:
    return text.removeprefix("Value error, ")
