"""Connection limits of a real ``ichor-bot serve``, probed with raw sockets the way the
red-team run found them: an endless header line, idle and slow connections, many connections.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import select
import socket
import uuid

import httpx

from tests.conftest import FIXTURES
from tests.support.waiting import wait_until
from tests.web.conftest import SECRETS, ServeProc, ServeProcess


def connect(server: ServeProcess, timeout: float = 15) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes; raises TimeoutError if it never does."""
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            data += chunk
    return data


def closed_while_trickling(sock: socket.socket, head: bytes, rounds: int = 60) -> bytes | None:
    """Send ``head``, then one byte every 0.25 s; what the server sent when it closed, or
    None if it was still open after ``rounds`` bytes."""
    sock.sendall(head)
    for _ in range(rounds):
        try:
            sock.send(b"a")
        except (BrokenPipeError, ConnectionResetError):
            return b""
        readable, _, _ = select.select([sock], [], [], 0.25)
        if readable:
            return read_until_closed(sock)
    return None


def test_a_huge_header_is_431_and_stops_being_read(serve_process: ServeProc) -> None:
    server = serve_process(max_header_bytes=64 << 10)
    with connect(server) as sock:
        sock.sendall(b"POST /webhooks/github HTTP/1.1\r\nHost: x\r\nX-Big: ")
        # Past the limit, then nothing more: the server must answer without waiting for the
        # end of the line (before the limit it read on, and grew the line quadratically).
        sock.sendall(b"a" * (80 << 10))
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:100]
    assert httpx.get(server.url + "/healthz", timeout=5).status_code == 200


def test_a_large_but_allowed_head_is_served(serve_process: ServeProc) -> None:
    server = serve_process(max_header_bytes=64 << 10)
    response = httpx.get(server.url + "/healthz", headers={"X-Pad": "p" * (60 << 10)}, timeout=10)
    assert response.status_code == 200


def test_an_idle_connection_is_closed(serve_process: ServeProc) -> None:
    server = serve_process(header_timeout_seconds=1)
    with connect(server) as sock:
        answer = read_until_closed(sock)  # the socket's 15 s timeout fails the test
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:100]


def test_a_slow_head_is_cut_off(serve_process: ServeProc) -> None:
    server = serve_process(header_timeout_seconds=1)
    with connect(server) as sock:
        answer = closed_while_trickling(sock, b"POST /webhooks/github HTTP/1.1\r\nX-Slow: ")
    assert answer is not None, "a head sent a byte at a time kept the connection open"
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408 ")


def test_a_slow_body_is_cut_off(serve_process: ServeProc) -> None:
    server = serve_process(body_timeout_seconds=1)
    head = (
        b"POST /webhooks/github HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: ping\r\n"
        b"Content-Length: 100000\r\n\r\n"
    )
    with connect(server) as sock:
        answer = closed_while_trickling(sock, head)
    assert answer is not None, "a body sent a byte at a time kept the connection open"


def test_a_kept_alive_connection_still_serves_requests(serve_process: ServeProc) -> None:
    server = serve_process(header_timeout_seconds=1)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        for _ in range(3):
            assert client.get("/healthz").status_code == 200


def open_fds(server: ServeProcess) -> int:
    return len(os.listdir(f"/proc/{server.proc.pid}/fd"))


def test_connections_are_bounded_and_the_idle_make_room(serve_process: ServeProc) -> None:
    server = serve_process(max_connections=20, header_timeout_seconds=60)
    assert httpx.get(server.url + "/healthz", timeout=5).status_code == 200
    before = open_fds(server)
    idle = [connect(server) for _ in range(200)]
    try:
        # Accepted in order: once a later request is answered, every idle one was seen.
        assert httpx.get(server.url + "/healthz", timeout=10).status_code == 200
        wait_until(lambda: open_fds(server) <= before + 21, "idle connections closed")
        closed = 0
        for sock in idle:
            sock.settimeout(0.01)
            with contextlib.suppress(TimeoutError):  # still open
                read_until_closed(sock)
                closed += 1
        assert closed >= 180
    finally:
        for sock in idle:
            sock.close()


def test_a_trailing_space_in_the_signature_header_verifies(serve_process: ServeProc) -> None:
    server = serve_process()
    body = (FIXTURES / "webhooks/github/pull_request__opened.json").read_bytes()
    digest = hmac.new(SECRETS["github"].encode(), body, hashlib.sha256).hexdigest()
    head = (
        "POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: {uuid.uuid4()}\r\n"
        f"X-Hub-Signature-256:  sha256={digest} \t\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with connect(server) as sock:
        sock.sendall(head.encode() + body)
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 202 "), answer[:300]


def test_when_every_connection_is_busy_a_new_one_is_refused(serve_process: ServeProc) -> None:
    server = serve_process(max_connections=5, body_timeout_seconds=60)
    busy = []
    try:
        for _ in range(5):  # a whole head, then a body that does not come: being read
            sock = connect(server)
            busy.append(sock)
            sock.sendall(
                b"POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n"
                b"Expect: 100-continue\r\n\r\n"
            )
            # Sent when the handler starts reading the body: the connection is busy now.
            assert sock.recv(100).startswith(b"HTTP/1.1 100 ")
        with connect(server) as extra:
            extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = read_until_closed(extra)
        assert answer.startswith(b"HTTP/1.1 503 "), answer[:100]
    finally:
        for sock in busy:
            sock.close()
    # Room again once they are gone.
    wait_until(
        lambda: httpx.get(server.url + "/healthz", timeout=5).status_code == 200,
        "room after the busy connections closed",
    )


def test_an_endless_trailer_is_cut_off(serve_process: ServeProc) -> None:
    server = serve_process(max_body_bytes=256 << 10)
    with connect(server) as sock:
        sock.sendall(
            b"POST /webhooks/github HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"2\r\n{}\r\n0\r\nX-Trailer: "
        )
        # Trailer lines grow by concatenation too; past the bound for what follows a head
        # (twice the body limit and a head) the server stops reading.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            for _ in range(12):
                sock.sendall(b"t" * (64 << 10))
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:100]
