"""What the fake GitLab records and how it tells time: one answered request (:class:`Call`),
an injected failure (:class:`Fault`), GitLab's timestamps (:func:`iso`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.fakeforge import base
from tests.fakeforge.base import RecordedCall


def now() -> float:
    """The fake's clock: the package's ``_now``, looked up on every call, so a test that
    patches ``tests.fakeforge.gitlab._now`` moves every part of the fake at once."""
    from tests.fakeforge import gitlab  # the package imports this module: late on purpose

    return gitlab._now()


def iso(ts: float | None = None) -> str:
    return _format(datetime.fromtimestamp(now() if ts is None else ts, UTC))


def _format(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def later_than(stamp: str) -> str:
    """Now, as :func:`iso`, but at least a millisecond after ``stamp``: an edit made in the
    millisecond a note was created must still read as one."""
    floor = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    moment = datetime.fromtimestamp(now(), UTC)
    moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    return _format(max(moment, floor + timedelta(milliseconds=1)))


@dataclass
class Call(RecordedCall):
    """One API request the fake answered. ``headers`` has the token cut out; ``token`` is the
    credential that was sent, for assertions."""

    method: str
    path: str
    query: dict[str, str]
    json: Any
    body: bytes
    headers: dict[str, str]
    token: str | None
    route: str | None = None
    status: int = 0
    response: Any = None
    errors: list[str] = field(default_factory=list)
    fault: Fault | None = None
    time: float = 0.0


@dataclass
class Fault(base.Fault):
    """An injected failure. ``times=None`` fires forever. ``status`` None: served normally,
    ``delay`` seconds late (after its effect). ``after``: served (its effect happens), then
    answered with ``status`` instead: a response lost on the way back."""

    after: bool = False
