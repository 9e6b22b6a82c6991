"""Uvicorn's httptools protocol with the limits it lacks: header size, read time, connections.

httptools accumulates a header line by concatenation and uvicorn sets no limit, so one
connection sending an endless header costs quadratic CPU; uvicorn also never closes a
connection that sends nothing, or sends a byte now and then. This subclass, per connection:

- stops feeding the parser once a request's head passes ``max_header_bytes`` (431, closed),
  and once what follows the head (body, chunk framing, trailers — whose lines httptools also
  grows by concatenation) passes twice ``max_body_bytes`` plus that (413, closed);
- closes a connection whose request head is not complete within ``header_timeout`` of its
  first byte (or of the connection, for one that sends nothing), and one whose body is not
  complete within ``body_timeout`` of its head (408 when nothing was answered yet);
- at ``max_connections``, makes room by closing the connection that has waited longest for a
  request head, and refuses the new one (503) only when every connection is busy.

Everything else (parsing, keep-alive, flow control) is uvicorn's own.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    max_header_bytes: int
    max_body_bytes: int
    header_timeout: float
    body_timeout: float
    max_connections: int


def _answer(status: bytes, message: bytes) -> bytes:
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"content-length: "
        + str(len(message)).encode()
        + b"\r\nconnection: close\r\n\r\n"
        + message
    )


HEAD_TOO_LARGE = _answer(
    b"431 Request Header Fields Too Large", b"request head over the size limit\n"
)
TOO_LARGE = _answer(b"413 Content Too Large", b"request over the size limit\n")
TIMED_OUT = _answer(b"408 Request Timeout", b"request not received in time\n")
BUSY = _answer(b"503 Service Unavailable", b"too many connections\n")


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    limits: ConnectionLimits  # set on the subclass made by protocol_class()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = True
        self._head_left = self.limits.max_header_bytes
        self._rest_left = 0
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_since = 0.0
        self._closed = False
        self._refused = False

    # -- connection ----------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.limits.max_connections and not self._evict_idle():
            self._closed = self._refused = True
            transport.write(BUSY)
            transport.close()
            return
        super().connection_made(transport)
        self._waiting_since = self.loop.time()
        self._arm(self.limits.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._refused:  # closed in connection_made: uvicorn never saw it
            return
        super().connection_lost(exc)

    def _evict_idle(self) -> bool:
        """Close the connection that has waited longest for a request head; False if none."""
        idle = [
            c
            for c in self.connections
            if isinstance(c, LimitedHttpToolsProtocol) and c._awaiting_request() and not c._closed
        ]
        if not idle:
            return False
        min(idle, key=lambda c: c._waiting_since)._close(TIMED_OUT)
        return True

    def _awaiting_request(self) -> bool:
        """Nothing of this connection is being handled: it only waits for (more of) a head."""
        return self._in_head and (self.cycle is None or self.cycle.response_complete)

    def _close(self, answer: bytes | None) -> None:
        if self._closed:
            return
        self._closed = True
        self._disarm()
        if answer is not None and self._may_answer() and not self.transport.is_closing():
            self.transport.write(answer)
        self.transport.close()

    def _may_answer(self) -> bool:
        """Whether an answer now would be the only one to the request being read."""
        cycle: RequestResponseCycle | None = self.cycle  # None until a first head is read
        if cycle is None:
            return True
        return cycle.response_complete if self._in_head else not cycle.response_started

    # -- timers --------------------------------------------------------------------------------
    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._timed_out)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _timed_out(self) -> None:
        self._deadline = None
        self._close(TIMED_OUT)

    # -- reading -------------------------------------------------------------------------------
    def data_received(self, data: bytes) -> None:
        if self._closed:
            return
        # Feed a head no further than its limit: the parser's cost grows with the square of
        # one header's length. Outside a head (bodies), data goes to the parser whole.
        while data and self._in_head and not self._closed:
            if self._head_left <= 0:
                self._close(HEAD_TOO_LARGE)
                return
            piece, data = data[: self._head_left], data[self._head_left :]
            self._head_left -= len(piece)
            super().data_received(piece)
        if data and not self._closed:
            self._rest_left -= len(data)
            if self._rest_left < 0:
                self._close(TOO_LARGE)
                return
            super().data_received(data)

    def timeout_keep_alive_handler(self) -> None:
        self._close(None)

    # -- parser callbacks ----------------------------------------------------------------------
    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:  # a kept-alive connection's next request starts now
            self._arm(self.limits.header_timeout)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._rest_left = 2 * self.limits.max_body_bytes + self.limits.max_header_bytes
        self._arm(self.limits.body_timeout)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        self._in_head = True
        self._head_left = self.limits.max_header_bytes
        self._waiting_since = self.loop.time()
        super().on_message_complete()


def protocol_class(limits: ConnectionLimits) -> type[LimitedHttpToolsProtocol]:
    """The protocol class for uvicorn's ``http=`` option, carrying ``limits``."""
    return type("IchorHttpProtocol", (LimitedHttpToolsProtocol,), {"limits": limits})
