"""Start ``ichor-bot`` processes from an interpreter that has already imported the bot.

An end-to-end test starts hundreds of ``ichor-bot worker --burst`` processes, and most of each
one's CPU went to importing the bot again (about 0.45 s of 0.7 s). A fork server imports it
once per test process; each run is a child forked from it, in a session of its own, with the
run's environment, argv, working directory and log as its file descriptors 1 and 2. The child
then runs ``bot.cli.main.main`` and ends through the interpreter's normal exit (``atexit``,
joins of non-daemon threads), as ``ichor-bot`` itself would. Only what happens at import is
shared, and the bot reads nothing at import (settings are read at start-up).

``ICHOR_E2E_EXEC=1`` starts every run as a new ``ichor-bot`` process instead.

The protocol is one JSON object a line: a request ``{"id", "argv", "env", "log", "cwd"}`` on
the server's stdin; ``{"id", "pid"}`` once forked and ``{"id", "exit"}`` once reaped on its stdout.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# Every module of the bot, with what each imports lazily: importing them here is the point.
PRELOAD_PACKAGES = ("bot", "workers")
# What httpx imports when its first client connects, python-gitlab when it first makes a client.
PRELOAD_MODULES = (
    "httpcore",
    "anyio._backends._asyncio",
    "h11",
    "gitlab.v4.objects",
    "pprint",
    "_strptime",
    "encodings.ascii",
)


class ForkServer:
    """The client: one server process, any number of runs at once (each on its own thread)."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.forkserver"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
        )
        self._lock = threading.Lock()
        self._next = 0
        self._pids: dict[int, Future[int]] = {}
        self._exits: dict[int, Future[int]] = {}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            message = json.loads(line)
            with self._lock:
                if "pid" in message:
                    self._pids.pop(message["id"]).set_result(message["pid"])
                else:
                    self._exits.pop(message["id"]).set_result(message["exit"])
        with self._lock:  # the server is gone: no run waits for ever
            for future in [*self._pids.values(), *self._exits.values()]:
                future.set_exception(RuntimeError("the fork server exited"))

    def run(self, argv: Sequence[str], env: Mapping[str, str], log: Path, *, timeout: float) -> int:
        """Run ``ichor-bot *argv`` to its end; on ``timeout`` kill its session and raise
        :class:`subprocess.TimeoutExpired`, as ``subprocess.run`` does."""
        process = self.spawn(argv, env, log)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            raise

    def spawn(self, argv: Sequence[str], env: Mapping[str, str], log: Path) -> Forked:
        """Start ``ichor-bot *argv`` and return at once."""
        pid: Future[int] = Future()
        exited: Future[int] = Future()
        with self._lock:
            self._next += 1
            ident = self._next
            self._pids[ident] = pid
            self._exits[ident] = exited
            request = {"id": ident, "argv": list(argv), "env": dict(env), "log": str(log)}
            assert self._proc.stdin is not None
            self._proc.stdin.write(json.dumps(request).encode() + b"\n")
            self._proc.stdin.flush()
        return Forked(pid.result(timeout=30), exited, ["ichor-bot", *argv])

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


class Forked:
    """A run the server forked, answering as much of ``subprocess.Popen`` as tests use; its
    exit status is the server's to reap and report."""

    def __init__(self, pid: int, exited: Future[int], args: list[str]) -> None:
        self.pid = pid
        self.args = args
        self._exited = exited

    @property
    def returncode(self) -> int | None:
        return self._exited.result() if self._exited.done() else None

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        try:
            return self._exited.result(timeout=timeout)
        except TimeoutError:
            raise subprocess.TimeoutExpired(self.args, timeout or 0) from None

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


Process = Forked | subprocess.Popen[bytes]
_server: ForkServer | None = None
_server_lock = threading.Lock()


def _shared_server() -> ForkServer:
    global _server
    with _server_lock:
        if _server is None:
            _server = ForkServer()
            atexit.register(_server.close)
        return _server


def _exec_argv(argv: Sequence[str]) -> list[str]:
    return [str(Path(sys.executable).parent / "ichor-bot"), *argv]


def popen_ichor_bot(argv: Sequence[str], env: Mapping[str, str], log: Path) -> Process:
    """Start ``ichor-bot *argv`` with ``env``, in a session of its own, its output appended to
    ``log``; return at once."""
    if os.environ.get("ICHOR_E2E_EXEC"):
        with log.open("ab") as out:
            return subprocess.Popen(
                _exec_argv(argv),
                env=dict(env),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
    return _shared_server().spawn(argv, env, log)


def run_ichor_bot(argv: Sequence[str], env: Mapping[str, str], log: Path, *, timeout: float) -> int:
    """``ichor-bot *argv`` with ``env``, its output appended to ``log``; its exit code."""
    if os.environ.get("ICHOR_E2E_EXEC"):
        with log.open("ab") as out:
            done = subprocess.run(
                _exec_argv(argv),
                env=dict(env),
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                check=False,
            )
        return done.returncode
    return _shared_server().run(argv, env, log, timeout=timeout)


# The server side: runs as ``python -m tests.support.forkserver``.


def _serve() -> list[str] | None:
    """Answer requests until stdin closes. In a forked child, return the child's argv."""
    import importlib
    import pkgutil
    import selectors

    for name in PRELOAD_MODULES:
        importlib.import_module(name)
    for package in PRELOAD_PACKAGES:
        path = importlib.import_module(package).__path__
        for module in pkgutil.walk_packages(path, f"{package}."):
            if not module.name.endswith(".__main__"):  # that one runs the CLI
                importlib.import_module(module.name)
    requests = os.fdopen(os.dup(0), "rb", buffering=0, closefd=False)
    replies = os.fdopen(os.dup(1), "wb", buffering=0, closefd=False)
    # SIGCHLD wakes the selector through a pipe, so an exit is answered at once.
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_write)
    # The preloaded objects are never collected: forked children then leave their pages shared.
    gc.freeze()
    selector = selectors.DefaultSelector()
    selector.register(requests, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    running: dict[int, int] = {}  # pid -> request id
    pending = b""
    open_input = True
    while open_input or running:
        for key, _ in selector.select():
            if key.fileobj == wake_read:
                os.read(wake_read, 4096)
                continue
            chunk = requests.read(65536)
            if not chunk:
                open_input = False
                selector.unregister(requests)
                continue
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request: dict[str, Any] = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    for fd in (wake_read, wake_write, requests.fileno(), replies.fileno()):
                        os.close(fd)
                    return _become_child(request)
                running[pid] = request["id"]
                replies.write(json.dumps({"id": request["id"], "pid": pid}).encode() + b"\n")
        while running:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            ident = running.pop(pid, None)
            if ident is not None:
                code = os.waitstatus_to_exitcode(status)
                replies.write(json.dumps({"id": ident, "exit": code}).encode() + b"\n")
    return None


def _become_child(request: Mapping[str, Any]) -> list[str]:
    import random

    os.setsid()  # a session of its own: a kill takes everything it started with it
    random.seed()
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(null)
    os.close(log)
    sys.stdout = open(1, "w", closefd=False, buffering=1)  # noqa: SIM115 - fd 1 is the log
    sys.stderr = open(2, "w", closefd=False, buffering=1)  # noqa: SIM115
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["ichor-bot", *request["argv"]]
    argv: list[str] = request["argv"]
    return argv


if __name__ == "__main__":
    child_argv = _serve()
    if child_argv is not None:
        from bot.cli.main import main

        code = main(child_argv)
        # What an exiting interpreter does that a process can see: join its threads, run the
        # atexit handlers (logging's flush among them), flush its streams. Tearing down every
        # preloaded module, as a full finalization would, costs more than the run itself.
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
