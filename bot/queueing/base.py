"""The queue seam: what the web process hands over, and what it is told back.

The queue only queues: what the bot remembers about pull requests is in :mod:`bot.state`.
"""

from __future__ import annotations

import enum
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from bot.errors import IchorError
from bot.state.base import GROUP_ENDED, merge_group_key
from bot.state.base import pull_key as pull_key  # re-exported: deliveries name pulls by it

JOB_FUNCTION = "workers.jobs.handle_delivery"
# Queued in place of a job abandoned by its worker with no retries left: it ends the check.
ABANDONED_FUNCTION = "workers.jobs.report_abandoned"
# Queued by a worker every ICHOR_RECONCILE_INTERVAL: redeliveries and the reconciler.
SWEEP_FUNCTION = "workers.sweep.sweep_job"
_JOB_ID_SAFE = re.compile(r"[A-Za-z0-9_-]{1,100}")


class Outcome(enum.StrEnum):
    QUEUED = "queued"  # new: a job was enqueued (202)
    DUPLICATE = "duplicate"  # seen before and not failed: nothing queued (200)
    REQUEUED = "requeued"  # seen before, its job failed: queued again (202)
    SPOOLED = "spooled"  # the queue is down: kept on local disk, queued later (202)
    UNAVAILABLE = "unavailable"  # the queue is down and the spool is full (503)


@dataclass(frozen=True, slots=True)
class QueuedDelivery:
    """A verified, parsed delivery: JSON-safe, so it can be spooled and passed to a job."""

    forge: str
    delivery_id: str
    event_name: str
    event: dict[str, Any]

    @property
    def job_id(self) -> str:
        return delivery_job_id(self.forge, self.delivery_id, self.event)

    @property
    def head(self) -> tuple[str, str] | None:
        """What the queue records in the state store as it queues the delivery, atomically
        with its job: (pull request key, head sha) for a change-request event, since the newest
        head received for a pull request is the only one whose result is posted; and (merge
        group key, :data:`GROUP_ENDED`) for a destroyed merge group, whose check, queued or
        running, then posts nothing."""
        event = self.event
        kind = event.get("type")
        if kind == "change_request":
            return (
                pull_key(self.forge, str(event["repo"]["full_name"]), int(event["number"])),
                str(event["head_sha"]),
            )
        if kind == "merge_group" and event.get("action") == "destroyed":
            group = merge_group_key(
                self.forge, str(event["repo"]["full_name"]), str(event["head_sha"])
            )
            return group, GROUP_ENDED
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "forge": self.forge,
            "delivery_id": self.delivery_id,
            "event_name": self.event_name,
            "event": self.event,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QueuedDelivery:
        return cls(
            str(data["forge"]), str(data["delivery_id"]), str(data["event_name"]), data["event"]
        )


def delivery_job_id(forge: str, delivery_id: str, event: Mapping[str, Any]) -> str:
    """The job a delivery is queued as (and deduplicated by): :func:`job_id_of` its delivery,
    but one job per head for a merge group's check, whichever delivery asks for it first (the
    ``merge_group`` event or the push of the group's branch), so the head gets one check run."""
    if event.get("type") == "merge_group" and event.get("action") == "checks_requested":
        repo = event.get("repo")
        full_name = repo.get("full_name") if isinstance(repo, Mapping) else None
        named = f"{str(full_name).casefold()}\n{event.get('head_sha')}"
        return f"{forge}-group-{hashlib.sha256(named.encode()).hexdigest()[:32]}"
    return job_id_of(forge, delivery_id)


def job_id_of(forge: str, delivery_id: str) -> str:
    """``<forge>-<delivery>``; ids with other characters are hashed (RQ validates ids)."""
    if _JOB_ID_SAFE.fullmatch(delivery_id):
        return f"{forge}-{delivery_id}"
    digest = hashlib.sha256(delivery_id.encode()).hexdigest()[:32]
    return f"{forge}-h{digest}"


class JobEndedError(IchorError):
    """A job that ended failed for the reason it says, on purpose: the queue marks it failed
    and logs the reason, without a traceback (there is no bug to find)."""


class QueueUnavailableError(Exception):
    """The queue's backing store cannot be reached right now (the spool takes over)."""


class DeliveryQueue(Protocol):
    def submit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]:
        """Queue each delivery once; raises :class:`QueueUnavailableError` when down."""
        ...

    async def asubmit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]:
        """The same, from the event loop."""
        ...

    def job_state(self, job_id: str) -> str | None: ...

    def job_result(self, job_id: str) -> Any:
        """What a finished job returned (None when unknown or not finished)."""
        ...

    def depth(self) -> int: ...

    def states(self) -> dict[str, int]: ...

    def ping(self) -> bool: ...

    def close(self) -> None: ...
