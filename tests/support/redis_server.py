"""A redis-server of a test's own, on a free port, that may be stopped and started again.

With ``persistent`` it keeps its data across a stop (an append-only file in ``directory``,
written on shutdown), as a production Redis does: the queue is still there when it is back.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import redis

from tests.support.waiting import wait_until


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    def __init__(self, directory: Path, *, persistent: bool = True) -> None:
        self.directory = directory
        self.persistent = persistent
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        directory.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        exe = shutil.which("redis-server")
        assert exe, "redis-server is needed"
        keep = ["--appendonly", "yes", "--appendfsync", "always"] if self.persistent else []
        argv = [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        argv += ["--dir", str(self.directory), *(keep or ["--appendonly", "no"])]
        log = (self.directory / "redis.log").open("ab")
        self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        client = redis.Redis(port=self.port)
        try:
            wait_until(client.ping, "redis-server started")
        finally:
            client.close()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=20)
            self.proc = None

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
