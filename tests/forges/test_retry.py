"""with_retries: only transient errors are retried, with backoff, or exactly as the server asks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bot.errors import PermanentForgeError, TransientForgeError
from bot.forges.http.retry import backoff_delay, with_retries


class Script:
    """A call that fails with the given errors in turn, then returns "ok"."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def run(call: Callable[[], str], **kwargs: Any) -> tuple[str, list[float]]:
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)

    result = with_retries(call, sleep=sleep, **kwargs)
    return result, slept


def test_success_needs_no_sleep() -> None:
    call = Script()
    assert run(call) == ("ok", [])
    assert call.calls == 1


def test_transient_errors_back_off_exponentially_with_jitter() -> None:
    call = Script(TransientForgeError("502"), TransientForgeError("502"), TransientForgeError("x"))
    result, slept = run(call, base_delay=1.0)
    assert result == "ok" and call.calls == 4
    # Equal jitter: each wait lies in [step/2, step] for steps 1, 2, 4.
    for delay, step in zip(slept, (1.0, 2.0, 4.0), strict=True):
        assert step / 2 <= delay <= step


def test_retry_after_is_used_exactly() -> None:
    call = Script(TransientForgeError("429", retry_after=2))
    assert run(call) == ("ok", [2])


def test_a_zero_or_negative_retry_after_does_not_wait() -> None:
    call = Script(TransientForgeError("429", retry_after=-5))
    assert run(call) == ("ok", [0.0])


def test_retry_after_beyond_max_delay_gives_up_at_once() -> None:
    error = TransientForgeError("rate limited", retry_after=3600)
    call = Script(error)
    with pytest.raises(TransientForgeError) as caught:
        run(call, max_delay=60)
    assert caught.value is error and caught.value.retry_after == 3600
    assert call.calls == 1


def test_attempts_are_bounded_and_the_last_error_propagates() -> None:
    errors = [TransientForgeError(f"try {i}") for i in range(5)]
    call = Script(*errors)
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)

    with pytest.raises(TransientForgeError) as caught:
        with_retries(call, attempts=3, sleep=sleep)
    assert caught.value is errors[2]
    assert call.calls == 3 and len(slept) == 2


@pytest.mark.parametrize("error", [PermanentForgeError("404"), ValueError("bug")])
def test_other_errors_are_not_retried(error: Exception) -> None:
    call = Script(error)
    with pytest.raises(type(error)):
        run(call)
    assert call.calls == 1


def test_max_delay_caps_the_backoff() -> None:
    call = Script(*[TransientForgeError("x") for _ in range(6)])
    _, slept = run(call, attempts=7, base_delay=10.0, max_delay=15.0)
    assert len(slept) == 6 and max(slept) <= 15.0


def test_on_retry_sees_each_error_and_delay() -> None:
    first = TransientForgeError("503", retry_after=1.5)
    seen: list[tuple[TransientForgeError, float]] = []
    _, slept = run(Script(first), on_retry=lambda exc, delay: seen.append((exc, delay)))
    assert seen == [(first, 1.5)] and slept == [1.5]


def test_attempts_must_be_positive() -> None:
    with pytest.raises(ValueError):
        run(Script(), attempts=0)


def test_backoff_delay_bounds() -> None:
    for retry in range(10):
        step = min(60.0, 0.5 * 2**retry)
        delay = backoff_delay(retry, base_delay=0.5, max_delay=60.0)
        assert step / 2 <= delay <= step
