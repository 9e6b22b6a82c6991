"""The forge-neutral events a webhook delivery becomes, and their JSON form.

Events travel to queue jobs as JSON, so every event has a lossless, JSON-safe dict form with a
``"type"`` discriminator (``event_to_dict`` / ``event_from_dict``). Decoding is strict: a
missing, extra or mistyped field is a ``WebhookError``, because a job built from a half-read
event would act on the wrong thing.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any, Literal, TypeAlias, Union, cast, get_args, get_origin, get_type_hints

from bot.repos import ForgeKind, RepoRef
from bot.webhooks.payload import WebhookError

Flavor: TypeAlias = Literal["github", "gitlab", "gitea", "forgejo"]
ChangeAction: TypeAlias = Literal["opened", "reopened", "updated"]
ApiVerb: TypeAlias = Literal["approve", "reject", "update", "delete", "create"]
# What a merge group's delivery asks: check its head (the merge_group event, or the push of its
# branch, whichever comes first), check it again (a re-run), or nothing more (destroyed).
MergeGroupAction: TypeAlias = Literal["checks_requested", "rerequested", "destroyed"]


@dataclass(frozen=True, slots=True)
class ChangeRequestEvent:
    """A pull request (GitHub, Gitea) or merge request (GitLab) whose head needs a check.

    ``author`` is the pull request's author on GitHub and Gitea; GitLab does not send the
    author's username, so there it is the user who triggered the hook.
    """

    repo: RepoRef
    number: int
    action: ChangeAction
    head_sha: str
    base_ref: str
    head_ref: str
    base_sha: str | None
    before_sha: str | None
    head_repo_full_name: str | None
    is_fork: bool
    author: str
    installation_id: int | None
    draft: bool


@dataclass(frozen=True, slots=True)
class PushEvent:
    """A push to a branch (``refs/heads/...``); tag pushes are Ignored, the bot checks branches."""

    repo: RepoRef
    ref: str
    before: str
    after: str
    created: bool
    deleted: bool
    pusher: str | None
    installation_id: int | None


@dataclass(frozen=True, slots=True)
class MergeGroupEvent:
    """A GitHub merge queue's merge group (design.md 4): the commit the queue would merge,
    built on ``base_sha`` of branch ``base_ref``, and the pull requests it queues, named by its
    ``gh-readonly-queue/…`` branch (empty when that branch could not be read)."""

    repo: RepoRef
    action: MergeGroupAction
    head_sha: str
    head_ref: str  # refs/heads/gh-readonly-queue/...
    base_ref: str  # the base branch's name, without refs/heads/
    base_sha: str
    pulls: tuple[int, ...]
    installation_id: int | None


@dataclass(frozen=True, slots=True)
class CommentEvent:
    """A new comment; ``number`` is None for a comment on a commit (GitLab)."""

    repo: RepoRef
    number: int | None
    on_change_request: bool
    body: str
    author: str
    comment_id: str
    installation_id: int | None
    author_is_bot: bool
    # When the forge says the comment was written (ISO 8601, UTC); None when it did not say:
    # an /approve covers only what checks published before it showed (design.md 5.1).
    created_at: str | None = None


@dataclass(frozen=True, slots=True)
class CheckRerequestEvent:
    """GitHub ``check_run``/``check_suite`` rerequested: run the check for ``head_sha`` again."""

    repo: RepoRef
    head_sha: str
    check_run_id: int | None
    check_suite_id: int | None
    pull_numbers: tuple[int, ...]
    installation_id: int


@dataclass(frozen=True, slots=True)
class RequestedActionEvent:
    """GitHub ``check_run`` requested_action: a button on a check run was pressed."""

    repo: RepoRef
    head_sha: str
    identifier: str
    check_run_id: int
    installation_id: int
    actor: str  # who pressed it: the command's actor, with the same permission checks
    actor_is_bot: bool
    pull_numbers: tuple[int, ...]  # the pull requests the check run belongs to


@dataclass(frozen=True, slots=True)
class ChangeApiEvent:
    """A change API request (``POST /api/v1/changes``), checked by the web app and queued as
    a job like a delivery; no webhook ever becomes one. ``actor`` is the API token's name,
    ``requester`` who the client says asked. ``namespace`` None: cluster-scoped."""

    repo: RepoRef  # the forge and full name only: the job asks the forge for the rest
    actor: str
    requester: str
    verb: ApiVerb
    target: str | None
    kind: str | None
    namespace: str | None
    name: str
    document: str | None  # create: the whole object, as JSON text (events hold plain values)
    fields: tuple[tuple[str, str], ...]
    reason: str
    request: str  # SHA-256 of the request: a reused Idempotency-Key is told from a retry


@dataclass(frozen=True, slots=True)
class InstallationEvent:
    """GitHub App ``installation`` / ``installation_repositories`` (action as GitHub sends it)."""

    action: str
    installation_id: int
    account: str
    repositories: tuple[str, ...]
    removed: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RepositoryAddedEvent:
    """A repository that a hook above it now reaches was created: a GitLab instance's system
    hook (``project_create``), a Gitea/Forgejo organisation's or instance's webhook
    (``repository`` ``created``). Onboarded, as a GitHub App's new installation is."""

    repo: RepoRef


@dataclass(frozen=True, slots=True)
class PingEvent:
    forge: ForgeKind
    hook_id: int | None


@dataclass(frozen=True, slots=True)
class Ignored:
    """A delivery the bot deliberately does nothing with, and why (answered 2xx, not queued)."""

    forge: ForgeKind
    event_name: str
    action: str | None
    reason: str


Event: TypeAlias = (
    ChangeRequestEvent
    | PushEvent
    | MergeGroupEvent
    | CommentEvent
    | CheckRerequestEvent
    | RequestedActionEvent
    | ChangeApiEvent
    | InstallationEvent
    | RepositoryAddedEvent
    | PingEvent
    | Ignored
)

# What the web app queues; a ping or an ignored delivery is answered without queueing.
ACTIONABLE: tuple[type[Any], ...] = (
    ChangeRequestEvent,
    PushEvent,
    MergeGroupEvent,
    CommentEvent,
    CheckRerequestEvent,
    RequestedActionEvent,
    InstallationEvent,
    RepositoryAddedEvent,
)


def is_actionable(event: Event) -> bool:
    return isinstance(event, ACTIONABLE)


@dataclass(frozen=True, slots=True)
class Delivery:
    """One parsed webhook request: where it came from, the forge's own ids, and the event."""

    forge: ForgeKind
    flavor: Flavor
    event_name: str
    delivery_id: str
    event: Event


_TYPES: dict[str, type[Any]] = {
    "change_request": ChangeRequestEvent,
    "push": PushEvent,
    "merge_group": MergeGroupEvent,
    "comment": CommentEvent,
    "check_rerequest": CheckRerequestEvent,
    "requested_action": RequestedActionEvent,
    "change_api": ChangeApiEvent,
    "installation": InstallationEvent,
    "repository_added": RepositoryAddedEvent,
    "ping": PingEvent,
    "ignored": Ignored,
}
_TYPE_OF = {cls: name for name, cls in _TYPES.items()}


def event_to_dict(event: Event) -> dict[str, Any]:
    """A JSON-safe dict: plain str/int/bool/None/list values and a ``"type"`` key."""
    return {"type": _TYPE_OF[type(event)], **_encode_fields(event)}


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """The event ``event_to_dict`` made; a WebhookError when ``data`` is not exactly that."""
    if not isinstance(data, Mapping):
        raise WebhookError("event: expected an object")
    kind = data.get("type")
    cls = _TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise WebhookError("event: missing or unknown type")
    return cast(Event, _decode_dataclass(cls, data, "event", skip="type"))


def delivery_to_dict(delivery: Delivery) -> dict[str, Any]:
    return {
        "forge": delivery.forge.value,
        "flavor": delivery.flavor,
        "event_name": delivery.event_name,
        "delivery_id": delivery.delivery_id,
        "event": event_to_dict(delivery.event),
    }


def delivery_from_dict(data: Mapping[str, Any]) -> Delivery:
    if not isinstance(data, Mapping) or not isinstance(data.get("event"), Mapping):
        raise WebhookError("delivery: expected an object with an event")
    head = {key: value for key, value in data.items() if key != "event"}
    shell = _decode_dataclass(_DeliveryHead, head, "delivery")
    return Delivery(
        shell.forge,
        shell.flavor,
        shell.event_name,
        shell.delivery_id,
        event_from_dict(data["event"]),
    )


@dataclass(frozen=True, slots=True)
class _DeliveryHead:
    forge: ForgeKind
    flavor: Flavor
    event_name: str
    delivery_id: str


def _encode_fields(obj: object) -> dict[str, Any]:
    return {f.name: _encode(getattr(obj, f.name)) for f in fields(cast(Any, obj))}


def _encode(value: object) -> Any:
    if isinstance(value, ForgeKind):
        return value.value
    if isinstance(value, RepoRef):
        return _encode_fields(value)
    if isinstance(value, tuple):
        return [_encode(item) for item in value]
    return value


def _decode_dataclass(cls: type[Any], data: Mapping[str, Any], path: str, skip: str = "") -> Any:
    declared = fields(cls)
    names = [f.name for f in declared]
    # A field added later has a default: a job queued by an older release still decodes.
    optional = {f.name for f in declared if f.default is not MISSING}
    hints = get_type_hints(cls)
    extra = set(data) - set(names) - {skip}
    if extra:
        raise WebhookError(f"{path}: unexpected field(s) {', '.join(sorted(map(str, extra)))}")
    values = {}
    for name in names:
        if name not in data:
            if name in optional:
                continue
            raise WebhookError(f"{path}.{name}: missing")
        values[name] = _decode(hints[name], data[name], f"{path}.{name}")
    return cls(**values)


def _decode(tp: Any, value: Any, path: str) -> Any:
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        for arm in get_args(tp):
            try:
                return _decode(arm, value, path)
            except WebhookError:
                continue
        raise WebhookError(f"{path}: unexpected value")
    if origin is Literal:
        if isinstance(value, str) and value in get_args(tp):
            return value
    elif origin is tuple:
        if isinstance(value, list | tuple):
            item_type = get_args(tp)[0]
            return tuple(_decode(item_type, v, f"{path}[{i}]") for i, v in enumerate(value))
    elif tp is type(None):
        if value is None:
            return None
    elif tp is bool or tp is str:
        if isinstance(value, tp):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is ForgeKind:
        if isinstance(value, str) and value in {forge.value for forge in ForgeKind}:
            return ForgeKind(value)
    elif tp is RepoRef and isinstance(value, Mapping):
        return _decode_dataclass(RepoRef, value, path)
    raise WebhookError(f"{path}: unexpected value")
