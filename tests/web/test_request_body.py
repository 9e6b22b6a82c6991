"""Request bodies against a real ``ichor-bot serve``: one over the limit is refused before it is
read, and many large ones at once stay within a memory budget instead of growing the process.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import hmac
import json
import select
import socket
import uuid

from tests.conftest import FIXTURES
from tests.web.conftest import SECRETS, ServeProc, ServeProcess

MIB = 1 << 20


def padded_delivery(size: int) -> bytes:
    """A real ``pull_request`` delivery, padded with one unknown field to ``size`` bytes."""
    event = json.loads((FIXTURES / "webhooks/github/pull_request__opened.json").read_bytes())
    event["padding"] = ""
    base = len(json.dumps(event).encode())
    event["padding"] = "p" * (size - base)
    return json.dumps(event).encode()


def head(body: bytes, *, declared: int | None = None) -> bytes:
    digest = hmac.new(SECRETS["github"].encode(), body, hashlib.sha256).hexdigest()
    return (
        "POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: {uuid.uuid4()}\r\n"
        f"X-Hub-Signature-256: sha256={digest}\r\n"
        f"Content-Length: {len(body) if declared is None else declared}\r\n\r\n"
    ).encode()


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def deliver(server: ServeProcess, body: bytes) -> int:
    """Send one delivery over a raw socket; the status code answered (0: none)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(head(body) + body)
        answer = b""
        with contextlib.suppress(ConnectionResetError):
            while b"\r\n" not in answer and (chunk := sock.recv(4096)):
                answer += chunk
    return status_of(answer)


def test_a_declared_size_over_the_limit_is_413_before_the_body(serve_process: ServeProc) -> None:
    server = serve_process(max_body_bytes=MIB)
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as sock:
        sock.sendall(head(b"", declared=2 * MIB))  # and no body at all
        answer = sock.recv(4096)
    assert status_of(answer) == 413, answer[:200]


def test_a_flood_of_large_bodies_stays_in_the_budget(serve_process: ServeProc) -> None:
    server = serve_process(max_body_bytes=25 * MIB, body_budget_bytes=64 * MIB)
    body = padded_delivery(25 * MIB - 1024)
    assert deliver(server, padded_delivery(64 * 1024)) == 202  # warm: imports, first parse
    before = server.rss_kib()
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        codes = list(pool.map(lambda _: deliver(server, body), range(32)))
    peak = server.rss_peak_kib()
    print(f"\nweb RSS before {before // 1024} MiB, peak under 32 x 25 MiB: {peak // 1024} MiB")
    assert set(codes) == {202, 503}, codes  # some fit the budget, the rest are refused
    # Unbounded, the 32 bodies alone are 800 MiB, and each is copied while it is handled.
    assert peak - before < 400 * 1024, (before, peak)


def chunked_head(body: bytes) -> bytes:
    digest = hmac.new(SECRETS["github"].encode(), body, hashlib.sha256).hexdigest()
    return (
        "POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: {uuid.uuid4()}\r\n"
        f"X-Hub-Signature-256: sha256={digest}\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode()


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def test_undeclared_sizes_count_against_the_budget_as_they_arrive(
    serve_process: ServeProc,
) -> None:
    server = serve_process(max_body_bytes=MIB, body_budget_bytes=MIB)
    body = padded_delivery(700 * 1024)
    half = len(body) // 2
    with (
        socket.create_connection(("127.0.0.1", server.port), timeout=15) as first,
        socket.create_connection(("127.0.0.1", server.port), timeout=15) as second,
    ):
        # Both 700 KiB bodies arrive without their last chunk: whichever is counted second
        # does not fit in the 1 MiB budget beside the other, and is answered at once.
        for sock in (first, second):
            sock.sendall(chunked_head(body) + chunk(body[:half]) + chunk(body[half:]))
        readable, _, _ = select.select([first, second], [], [], 15)
        assert len(readable) == 1, "exactly one is refused while both are held"
        refused = readable[0]
        assert status_of(refused.recv(4096)) == 503
        held = second if refused is first else first
        held.sendall(b"0\r\n\r\n")
        assert status_of(held.recv(4096)) == 202
