"""The queue seam: what the web process hands over, and what it is told back.

The queue only queues: what the bot remembers about pull requests is in :mod:`bot.state`.
"""

from __future__ import annotations

import enum
import hashlib
import re
from dataclasses import dataclass
from typing import Any, Protocol

from bot.errors import IchorError
from bot.state.base import pull_key as pull_key  # re-exported: deliveries name pulls by it

JOB_FUNCTION = "workers.jobs.handle_delivery"
# Queued in place of a job abandoned by its worker with no retries left: it ends the check.
ABANDONED_FUNCTION = "workers.jobs.report_abandoned"
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
        return job_id_of(self.forge, self.delivery_id)

    @property
    def head(self) -> tuple[str, str] | None:
        """(pull request key, head sha) for a change-request event: the newest head received for
        a pull request is the only one whose result is posted; the queue records it in the state
        store when it queues the delivery."""
        event = self.event
        if event.get("type") != "change_request":
            return None
        return (
            pull_key(self.forge, str(event["repo"]["full_name"]), int(event["number"])),
            str(event["head_sha"]),
        )

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
