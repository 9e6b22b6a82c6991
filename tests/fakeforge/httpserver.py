"""A small threaded HTTP/1.1 server on 127.0.0.1 that hands each request to one callable.

Keep-alive connections are tracked so :meth:`LocalServer.stop` closes them and joins every
handler thread: nothing lingers after a test.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit


@dataclass
class Request:
    method: str
    target: str  # raw request target: path and query
    path: str  # raw (still percent-encoded) path
    query: dict[str, str]  # last value wins
    headers: dict[str, str]  # lower-case names
    body: bytes


@dataclass
class Response:
    status: int
    body: Any = None  # JSON value (None: empty body) or bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (interrupted by stop())

    def encode(self) -> bytes:
        if self.body is None:
            return b""
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()


Handler = Callable[[Request], Response]


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = True  # server_close() joins the handler threads
    allow_reuse_address = True

    def __init__(self, handler: Handler, stopping: threading.Event) -> None:
        self.app = handler
        self.stopping = stopping
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _RequestHandler)

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        with self.connections_lock:
            self.connections.add(conn)
        return conn, addr

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self.connections_lock:
            conns = list(self.connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    timeout = 60  # an idle keep-alive connection is dropped after this
    disable_nagle_algorithm = True  # headers and body go out in two writes

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            chunks = []
            while True:
                size_line = self.rfile.readline().split(b";")[0].strip()
                size = int(size_line or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _dispatch(self) -> None:
        body = self._read_body()
        split = urlsplit(self.path)
        request = Request(
            method=self.command,
            target=self.path,
            path=split.path,
            query=dict(parse_qsl(split.query, keep_blank_values=True)),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        try:
            response = self.server.app(request)
        except Exception as exc:  # a bug in the fake: answer 500 and say what it was
            response = Response(500, {"message": f"fake server error: {exc!r}"})
        if response.delay > 0 and self.server.stopping.wait(response.delay):
            self.close_connection = True
            return
        payload = response.encode()
        try:
            self.send_response(response.status, _reason(response.status))
            headers = {k.lower(): v for k, v in response.headers.items()}
            if response.body is not None and not isinstance(response.body, bytes | str):
                headers.setdefault("content-type", "application/json; charset=utf-8")
            for name, value in headers.items():
                if name != "content-length":
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
            self.wfile.flush()
        except OSError:  # the client went away (e.g. its timeout fired during a delay)
            self.close_connection = True

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = _dispatch


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Status"


class LocalServer:
    """``handler`` served on 127.0.0.1 at a free port, in a background thread."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._stopping = threading.Event()
        self._server: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("server not started")
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address, never a socket path
        return f"http://{host}:{port}"

    @property
    def stopping(self) -> threading.Event:
        """Set while the server stops: anything waiting on a request should give up."""
        return self._stopping

    def start(self) -> None:
        if self._server is not None:
            return
        self._stopping.clear()
        self._server = _HTTPServer(self._handler, self._stopping)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"fakeforge-{self._server.server_address[1]}",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.close_connections()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._server = self._thread = None
