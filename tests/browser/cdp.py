"""A small DevTools-protocol client: open a page in headless Chromium and collect what its
console said (messages, uncaught exceptions, CSP violations, failed loads)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import subprocess
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets

from tests.browser.harness import CHROMIUM_FLAGS, chromium


@dataclass
class PageLog:
    """What one page load left in the console, and answers to the expressions evaluated."""

    entries: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def errors(self) -> list[str]:
        return [e for e in self.entries if e.startswith(("error", "exception"))]


class Session:
    def __init__(self, socket: Any, session_id: str) -> None:
        self.socket = socket
        self.session_id = session_id
        self.ids = itertools.count(1)
        self.log = PageLog()
        self.events: dict[str, asyncio.Event] = {}

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        call_id = next(self.ids)
        message = {"id": call_id, "method": method, "params": params}
        await self.socket.send(json.dumps({**message, "sessionId": self.session_id}))
        while True:
            reply = json.loads(await self.socket.recv())
            if reply.get("id") == call_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self._event(reply)

    async def wait(self, event: str, timeout: float = 30) -> None:
        flag = self.events.setdefault(event, asyncio.Event())
        async with asyncio.timeout(timeout):
            while not flag.is_set():
                self._event(json.loads(await self.socket.recv()))

    def _event(self, message: dict[str, Any]) -> None:
        method = message.get("method", "")
        params = message.get("params", {})
        self.events.setdefault(method, asyncio.Event()).set()
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            self.log.entries.append(f"{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.log.entries.append(f"exception: {details.get('text')} {details.get('exception')}")
        elif method == "Log.entryAdded":
            entry = params["entry"]
            self.log.entries.append(f"{entry['level']}: [{entry['source']}] {entry['text']}")


@contextlib.asynccontextmanager
async def browser(user_data: Path) -> AsyncIterator[Any]:
    exe = chromium()
    assert exe is not None
    proc = subprocess.Popen(
        [exe, *CHROMIUM_FLAGS, f"--user-data-dir={user_data}", "--remote-debugging-port=0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file = user_data / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.is_file() or len(port_file.read_text().splitlines()) < 2:
            assert time.monotonic() < deadline, "Chromium did not open its DevTools port"
            await asyncio.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        async with websockets.connect(f"ws://127.0.0.1:{port}{path}", max_size=2**24) as ws:
            yield ws
    finally:
        proc.terminate()
        proc.wait(timeout=15)


async def _browser_call(ws: Any, call_id: int, method: str, **params: Any) -> dict[str, Any]:
    await ws.send(json.dumps({"id": call_id, "method": method, "params": params}))
    while True:
        reply = json.loads(await ws.recv())
        if reply.get("id") == call_id:
            result: dict[str, Any] = reply["result"]
            return result


async def load(
    url: str,
    user_data: Path,
    expressions: dict[str, str] | None = None,
    settle: float = 0.5,
    viewport: tuple[int, int] | None = None,
) -> PageLog:
    """Load ``url`` in a fresh tab (of ``viewport`` CSS pixels, when given), let late messages
    arrive for ``settle`` seconds, evaluate ``expressions`` (name → JavaScript, run by
    DevTools, not by the page) and return the log."""
    async with browser(user_data) as ws:
        target = await _browser_call(ws, 1, "Target.createTarget", url="about:blank")
        attached = await _browser_call(
            ws, 2, "Target.attachToTarget", targetId=target["targetId"], flatten=True
        )
        page = Session(ws, attached["sessionId"])
        for domain in ("Runtime", "Log", "Page"):
            await page.call(f"{domain}.enable")
        if viewport is not None:
            width, height = viewport
            await page.call(
                "Emulation.setDeviceMetricsOverride",
                width=width,
                height=height,
                deviceScaleFactor=1,
                mobile=False,
            )
        await page.call("Page.navigate", url=url)
        await page.wait("Page.loadEventFired")
        with contextlib.suppress(TimeoutError):
            await page.wait("never", timeout=settle)  # collects what arrives meanwhile
        for name, expression in (expressions or {}).items():
            answer = await page.call("Runtime.evaluate", expression=expression, returnByValue=True)
            page.log.values[name] = answer["result"].get("value")
        with contextlib.suppress(TimeoutError):
            await page.wait("never", timeout=settle)
        return page.log


def load_page(
    url: str,
    user_data: Path,
    expressions: dict[str, str] | None = None,
    settle: float = 0.5,
    viewport: tuple[int, int] | None = None,
) -> PageLog:
    return asyncio.run(load(url, user_data, expressions, settle, viewport))
