"""A real git smart-HTTP server for tests: ``git http-backend`` as a CGI behind a thread.

Serves the bare repositories under ``root`` (``<owner>/<name>.git``) on 127.0.0.1, asks
``authorize`` about every request's ``Authorization`` header (fetches and pushes alike: a
refused one is a 401 before http-backend runs) and records every request, so a test can count
round trips. ``fail_next`` makes the next requests answer 500; ``before_push`` runs a callback
between a pusher's read of the refs and the push (someone else moving a branch in between).
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import unquote, urlsplit

# What GitHub allows too: partial clone, and fetching any object by id.
_SERVER_CONFIG = (
    ("uploadpack.allowFilter", "true"),
    ("uploadpack.allowAnySHA1InWant", "true"),
    # Tests push through the server too (http-backend refuses pushes from anonymous users).
    ("http.receivepack", "true"),
    ("uploadpack.allowReachableSHA1InWant", "true"),
)


@dataclass(frozen=True, slots=True)
class GitRequest:
    method: str
    path: str
    query: str
    authorized: bool
    status: int
    chunked: bool = False  # the body came with Transfer-Encoding: chunked
    content_encoding: str | None = None  # e.g. "gzip", passed on to http-backend


class GitHttpServer:
    def __init__(self, root: Path, authorize: Callable[[str | None], bool]) -> None:
        self.root = Path(root)
        self.authorize = authorize
        self.url = ""
        self.requests: list[GitRequest] = []
        self.fail_next = 0  # answer this many coming requests with a 500
        self._before_pushes: list[Callable[[], None]] = []  # see before_push
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def clone_url(self, full_name: str) -> str:
        return f"{self.url}/{full_name}.git"

    def posts(self, service: str = "git-upload-pack") -> list[GitRequest]:
        """Recorded POSTs to ``service`` (each is one fetch round trip)."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path.endswith(service)]

    def record(self, request: GitRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def before_push(self, callback: Callable[[], None], *, times: int = 1) -> None:
        """Run ``callback`` before each of the next ``times`` authorized pushes (a POST to
        ``git-receive-pack``) reach git: after the pusher read the refs, before they change."""
        with self._lock:
            self._before_pushes.extend([callback] * times)

    def take_before_push(self, method: str, path: str) -> Callable[[], None] | None:
        if method != "POST" or not path.endswith("/git-receive-pack"):
            return None
        with self._lock:
            return self._before_pushes.pop(0) if self._before_pushes else None

    def take_failure(self) -> bool:
        with self._lock:
            if self.fail_next > 0:
                self.fail_next -= 1
                return True
            return False

    def start(self) -> None:
        if self._server is not None:
            raise RuntimeError("already started")
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = False  # server_close() joins the handler threads
        self._server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def cgi_environment(
        self, method: str, path: str, query: str, headers: dict[str, str], length: int, addr: str
    ) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "REQUEST_METHOD": method,
            "QUERY_STRING": query,
            "PATH_INFO": unquote(path),
            "REMOTE_ADDR": addr,
            "CONTENT_TYPE": headers.get("content-type", ""),
            "GIT_CONFIG_COUNT": str(len(_SERVER_CONFIG)),
        }
        if method == "POST":
            env["CONTENT_LENGTH"] = str(length)
        if "git-protocol" in headers:
            env["GIT_PROTOCOL"] = headers["git-protocol"]
        if "content-encoding" in headers:  # http-backend inflates gzip bodies itself
            env["HTTP_CONTENT_ENCODING"] = headers["content-encoding"]
        for i, (key, value) in enumerate(_SERVER_CONFIG):
            env[f"GIT_CONFIG_KEY_{i}"] = key
            env[f"GIT_CONFIG_VALUE_{i}"] = value
        return env


def _handler_for(server: GitHttpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        owner = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    owner: GitHttpServer
    protocol_version = "HTTP/1.1"  # answers Expect: 100-continue; every response closes
    timeout = 30  # a silent client cannot hold stop() forever

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        authorized = bool(self.owner.authorize(self.headers.get("Authorization")))
        body = self._read_body()
        if self.owner.take_failure():
            status, headers, payload = 500, [("Content-Type", "text/plain")], b"injected failure\n"
        elif not authorized:
            status = 401
            headers = [("WWW-Authenticate", 'Basic realm="fake"'), ("Content-Type", "text/plain")]
            payload = b"authentication required\n"
        else:
            racer = self.owner.take_before_push(self.command, parts.path)
            if racer is not None:
                racer()
            status, headers, payload = self._run_backend(parts.path, parts.query, body)
        chunked = self.headers.get("Transfer-Encoding", "").lower() == "chunked"
        encoding = self.headers.get("Content-Encoding")
        request = GitRequest(
            self.command, parts.path, parts.query, authorized, status, chunked, encoding
        )
        # Recorded before the answer goes out: a client that has read it finds it recorded.
        self.owner.record(request)
        self._reply(status, headers, payload)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunked(self) -> bytes:
        out = bytearray()
        while True:
            size = int(self.rfile.readline(65537).split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return bytes(out)
            out += self.rfile.read(size)
            self.rfile.readline(65537)  # the CRLF after the chunk

    def _run_backend(
        self, path: str, query: str, body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        headers = {k.lower(): v for k, v in self.headers.items()}
        env = self.owner.cgi_environment(
            self.command, path, query, headers, len(body), self.client_address[0]
        )
        proc = subprocess.run(
            ["git", "http-backend"], input=body, capture_output=True, env=env, check=False
        )
        status, cgi_headers, payload = _parse_cgi(proc.stdout)
        if proc.returncode != 0 and not proc.stdout:
            status, cgi_headers, payload = 500, [], proc.stderr
        return status, cgi_headers, payload

    def _reply(self, status: int, headers: list[tuple[str, str]], payload: bytes) -> None:
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)
        self.close_connection = True


def _parse_cgi(output: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    """Status, headers and body of a CGI response (headers end at the first empty line)."""
    ends = [(i, n) for i, n in ((output.find(b"\r\n\r\n"), 4), (output.find(b"\n\n"), 2)) if i >= 0]
    if not ends:
        return 502, [], output
    end, skip = min(ends)
    status, headers = 200, []
    for line in output[:end].decode("latin-1").splitlines():
        name, sep, value = line.partition(":")
        if not sep:
            continue
        name, value = name.strip(), value.strip()
        if name.lower() == "status":
            status = int(value.split()[0])
        else:
            headers.append((name, value))
    return status, headers, output[end + skip :]
