"""The manifest flow's states: once, briefly, in the browser that started it, and held by that
browser, so nobody else's requests can spend or push out a pending one."""

from __future__ import annotations

import base64

from bot.web.setup_states import SetupStates


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_state_is_used_once() -> None:
    states = SetupStates(Clock())
    state = states.issue()
    assert states.consume(state, state) is not None
    assert states.consume(state, state) is None


def test_a_state_expires() -> None:
    clock = Clock()
    states = SetupStates(clock, ttl=60)
    early = states.issue()
    clock.now = 30
    late = states.issue()
    clock.now = 60
    assert states.consume(early, early) is None
    assert states.consume(late, late) is not None
    clock.now = 90
    assert states.consume(late, late) is None
    assert len(states) == 0  # spent states are forgotten once they would have expired


def test_the_browser_copy_must_match() -> None:
    states = SetupStates(Clock())
    state, other = states.issue(), states.issue()
    assert states.consume(state, None) is None
    assert states.consume(other, state) is None
    # A refused state is spent: not even the right browser may use it afterwards.
    assert states.consume(state, state) is None
    assert states.consume(other, other) is None


def test_issuing_keeps_nothing_so_a_flood_evicts_nobody() -> None:
    states = SetupStates(Clock())
    mine = states.issue()
    for _ in range(10_000):
        states.issue()
    assert len(states) == 0
    assert states.consume(mine, mine) is not None


def test_a_forged_or_altered_state_is_refused() -> None:
    states, elsewhere = SetupStates(Clock()), SetupStates(Clock())
    theirs = elsewhere.issue()  # another process's key
    assert states.consume(theirs, theirs) is None
    mine = states.issue()
    raw = bytearray(base64.urlsafe_b64decode(mine + "=="))
    raw[20] ^= 1  # the time of issue, moved
    altered = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    for bad in (altered, "", "a", "not base64 at all!", mine[:-2], mine + "AA"):
        assert states.consume(bad, bad) is None
    assert states.consume(mine, mine) is not None


def test_spent_states_are_bounded() -> None:
    states = SetupStates(Clock(), spent_capacity=3)
    issued = [states.issue() for _ in range(50)]
    for state in issued:
        assert states.consume(state, state) is not None
    assert len(states) == 3


def test_states_are_unguessable_and_url_safe() -> None:
    states = SetupStates(Clock())
    values = {states.issue() for _ in range(50)}
    assert len(values) == 50
    assert all(40 <= len(v) <= 200 for v in values)
    assert all(v.replace("-", "").replace("_", "").isalnum() for v in values)
