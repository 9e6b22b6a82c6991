"""Which of the App's webhook deliveries to ask GitHub for again (design.md 7): those no
attempt of which reached the bot. Pure: the adapter lists the deliveries
(:mod:`bot.forges.github.deliveries`), the sweep says which the bot processed (its dedupe
marker: a redelivery keeps its GUID) and asks.

GitHub lists every attempt of a delivery as an item of its own, the redeliveries marked, all
under the delivery's GUID; an attempt succeeded when the bot answered 2xx. A delivery is tried
again at most a few times (its attempts are counted from GitHub's list, so nothing needs
remembering), and only for the events the bot acts on: any other is answered 200 and dropped.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

# The events the bot's GitHub webhook acts on (bot/webhooks/github.py).
ACTED_ON = frozenset(
    {
        "pull_request",
        "push",
        "issue_comment",
        "pull_request_review_comment",
        "check_run",
        "check_suite",
        "installation",
        "installation_repositories",
    }
)


@dataclass(frozen=True, slots=True)
class HookDelivery:
    """One attempt of a delivery of the App's webhook, as GitHub lists it."""

    id: int
    guid: str
    delivered_at: float  # epoch seconds
    redelivery: bool
    status_code: int  # what the bot answered; 0 when nothing answered
    event: str
    action: str | None = None
    installation_id: int | None = None
    repository_id: int | None = None

    @property
    def reached(self) -> bool:
        return 200 <= self.status_code < 300


@dataclass(frozen=True, slots=True)
class Failed:
    """A delivery none of whose attempts reached the bot: its newest attempt (what a
    redelivery is asked of) and how many attempts were made."""

    newest: HookDelivery
    attempts: int
    first_at: float

    @property
    def guid(self) -> str:
        return self.newest.guid


def failed(deliveries: Iterable[HookDelivery], *, since: float) -> list[Failed]:
    """The deliveries of events the bot acts on, first tried at or after ``since``, that never
    reached it; oldest first, so the bot sees them in the order they happened."""
    attempts: dict[str, list[HookDelivery]] = {}
    for delivery in deliveries:
        attempts.setdefault(delivery.guid, []).append(delivery)
    found = []
    for tried in attempts.values():
        first_at = min(d.delivered_at for d in tried)
        if any(d.reached for d in tried) or first_at < since or tried[0].event not in ACTED_ON:
            continue
        newest = max(tried, key=lambda d: (d.delivered_at, d.id))
        found.append(Failed(newest, len(tried), first_at))
    return sorted(found, key=lambda f: (f.first_at, f.newest.id))


@dataclass(frozen=True, slots=True)
class Plan:
    """What to ask again, and why the rest is not (counted by reason)."""

    ask: tuple[Failed, ...] = ()
    left: dict[str, int] = field(default_factory=dict)


PROCESSED = "processed"  # the bot has it (answered slowly, say): it must not run twice
ASKED = "asked"  # asked for lately: GitHub may not have tried yet
GIVEN_UP = "given up"  # tried as often as allowed
OVER_LIMIT = "over the limit"  # for a later run


def plan(
    found: Iterable[Failed],
    *,
    processed: Collection[str],
    asked: Collection[str],
    max_attempts: int,
    limit: int,
) -> Plan:
    """The failed deliveries to ask for again: not ``processed`` by the bot (its dedupe marker
    is set), not ``asked`` for lately, tried fewer than ``max_attempts`` times; at most
    ``limit``."""
    ask: list[Failed] = []
    left: dict[str, int] = {}
    for delivery in found:
        if delivery.guid in processed:
            reason = PROCESSED
        elif delivery.guid in asked:
            reason = ASKED
        elif delivery.attempts >= max_attempts:
            reason = GIVEN_UP
        elif len(ask) >= limit:
            reason = OVER_LIMIT
        else:
            ask.append(delivery)
            continue
        left[reason] = left.get(reason, 0) + 1
    return Plan(tuple(ask), left)
