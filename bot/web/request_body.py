"""Reading a request body within two bounds: its own size, and all bodies in flight together.

Each body is limited (413 when declared or found over it); all bodies being read or handled
at once share a byte budget, so many large deliveries in parallel cannot grow the process
without bound (503 when the budget is spent, decided before reading when the size is
declared). A refusal is a result, not an exception.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.requests import ClientDisconnect, Request


class BodyRefusal(enum.Enum):
    TOO_LARGE = "body over the size limit"
    NO_BUDGET = "too many large deliveries in flight; retry later"
    DISCONNECTED = "client disconnected"


class BodyBudget:
    """Bytes of request bodies held at once. Used from the event loop only: no lock."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.in_flight = 0

    def take(self, size: int) -> bool:
        if self.in_flight + size > self.total:
            return False
        self.in_flight += size
        return True

    def give(self, size: int) -> None:
        self.in_flight -= size


@asynccontextmanager
async def limited_body(
    request: Request, limit: int, budget: BodyBudget
) -> AsyncIterator[bytes | BodyRefusal]:
    """The body, or why not; its bytes count against ``budget`` until the block ends."""
    held = 0
    try:
        declared = _declared_length(request)
        if declared is not None:
            if declared > limit:
                yield BodyRefusal.TOO_LARGE
                return
            if not budget.take(declared):
                yield BodyRefusal.NO_BUDGET
                return
            held = declared
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    yield BodyRefusal.TOO_LARGE
                    return
                if size > held:  # undeclared (chunked), or more than declared
                    if not budget.take(size - held):
                        yield BodyRefusal.NO_BUDGET
                        return
                    held = size
                chunks.append(chunk)
        except ClientDisconnect:
            yield BodyRefusal.DISCONNECTED
            return
        yield b"".join(chunks)
    finally:
        budget.give(held)


def _declared_length(request: Request) -> int | None:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit():
        return int(declared)
    return None
