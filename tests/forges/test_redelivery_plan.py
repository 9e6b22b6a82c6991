"""Which of GitHub's deliveries to ask for again, pure: the attempts of a delivery are grouped
by its GUID, and only those none of which reached the bot are asked for, within bounds."""

from __future__ import annotations

from bot.forges.github.redelivery import (
    ASKED,
    GIVEN_UP,
    OVER_LIMIT,
    PROCESSED,
    HookDelivery,
    failed,
    plan,
)


def attempt(
    n: int, guid: str, at: float, status: int = 502, event: str = "pull_request"
) -> HookDelivery:
    return HookDelivery(n, guid, at, n > 100, status, event, "opened", 42, 7)


def test_a_delivery_failed_when_none_of_its_attempts_reached_the_bot() -> None:
    found = failed(
        [
            attempt(1, "lost", 100.0),
            attempt(2, "late", 101.0),
            attempt(103, "late", 150.0, status=202),  # a redelivery that reached it
            attempt(4, "old", 10.0),  # first tried before the window
            attempt(105, "old", 120.0),
            attempt(6, "ping", 110.0, event="ping"),  # an event the bot does not act on
            attempt(7, "twice", 102.0, status=0),
            attempt(108, "twice", 130.0, status=503),
        ],
        since=50.0,
    )
    assert [(f.guid, f.newest.id, f.attempts, f.first_at) for f in found] == [
        ("lost", 1, 1, 100.0),
        ("twice", 108, 2, 102.0),  # asked of its newest attempt; oldest first
    ]


def test_the_plan_leaves_out_what_the_bot_has_and_keeps_within_bounds() -> None:
    found = failed(
        [attempt(n, f"g{n}", 100.0 + n) for n in range(1, 7)]
        + [attempt(100 + n, "g3", 200.0 + n) for n in (1, 2)],  # g3: tried three times
        since=0.0,
    )
    chosen = plan(found, processed={"g1"}, asked={"g2"}, max_attempts=3, limit=2)
    assert [f.guid for f in chosen.ask] == ["g4", "g5"]
    assert chosen.left == {PROCESSED: 1, ASKED: 1, GIVEN_UP: 1, OVER_LIMIT: 1}
