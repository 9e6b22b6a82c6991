"""What the fake forges share: fault injection, call recording, problem lists, ``wait_for``,
id counters, the API server's and git server's lifecycle, bare repositories, paging.

A fake subclasses :class:`FakeForgeBase` and supplies how a request is recorded
(:meth:`FakeForgeBase._new_call`), checked and answered (:meth:`FakeForgeBase._process`, which
wraps the request's effect in :meth:`FakeForgeBase._with_fault`) and how git authenticates
(:meth:`FakeForgeBase._git_authorize`). Where the forges differ on purpose there is a hook with
a default: a fault's default body, headers on every answer, a fault that answers after its
effect (GitLab), requests that are not API calls (git on the API's origin).

:class:`DescribedForge` is the request pipeline of a fake checked against a recorded
description (GitHub's OpenAPI, Gitea's Swagger); the forge's answers are its hooks.
"""

from __future__ import annotations

import copy
import http.client
import itertools
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Self, TypeVar
from urllib.parse import urlencode, urlsplit

from tests.fakeforge.httpserver import LocalServer, Request, Response
from tests.fakeforge.openapi import OpenApi, Operation, Problem, RouteError, join_problems

T = TypeVar("T")
CallT = TypeVar("CallT", bound="RecordedCall")
FaultT = TypeVar("FaultT", bound="Fault")
DescribedCallT = TypeVar("DescribedCallT", bound="DescribedCall")

# Headers of one hop, never passed on by a proxy.
HOP_HEADERS = frozenset(
    {"host", "connection", "keep-alive", "content-length", "transfer-encoding", "expect"}
)
# What parse_json() answers for a body that is not JSON.
INVALID = object()


class RecordedCall:
    """What every fake's ``Call`` dataclass has: the fake fills in the answer, and a call reads
    as ``"METHOD /path status"`` (``summary()``, ``str()``)."""

    method: str
    path: str
    json: Any
    status: int
    response: Any
    errors: list[str]
    fault: Fault | None

    def summary(self) -> str:
        return f"{self.method} {self.path} {self.status}"

    def __str__(self) -> str:
        return self.summary()


class DescribedCall(RecordedCall):
    """A call of a :class:`DescribedForge`: it also names the operation it matched."""

    template: str | None
    operation_id: str | None


@dataclass
class Fault:
    """An injected failure. ``times=None`` fires forever. With ``status`` None the request is
    served normally, only ``delay`` seconds late (after its effect: a client that times out
    has still changed the state, as with a slow forge)."""

    method: str | None
    path: re.Pattern[str]
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    delay: float = 0.0
    times: int | None = 1
    hits: int = 0

    def matches(self, method: str, path: str) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.method is not None and self.method.upper() != method.upper():
            return False
        return self.path.fullmatch(path) is not None

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.hits >= self.times


@dataclass
class Hold:
    """The first request matching ``method`` and ``path`` waits, before taking effect, until
    released (it then takes effect) or dropped (it never does: its client was killed meanwhile
    and a real forge would have seen the connection go). ``reached`` says it arrived."""

    method: str
    path: re.Pattern[str]
    reached: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    dropped: bool = False

    def release(self) -> None:
        self.released.set()

    def drop(self) -> None:
        self.dropped = True
        self.released.set()


class Reject(Exception):
    """Answer ``response`` now; ``kind`` names the problem list that records ``message``."""

    def __init__(self, response: Response, kind: str | None = None, message: str = "") -> None:
        super().__init__(message)
        self.response = response
        self.kind = kind
        self.message = message


class FakeForgeBase(Generic[CallT]):
    """The test-facing machinery of a fake forge; see the module docstring for the hooks."""

    _fault_type: type[Fault] = Fault  # what inject() makes

    def __init__(self, git_root: Path | None = None, *, first_id: int = 1) -> None:
        self.git_root = Path(git_root) if git_root is not None else None
        self._lock = threading.RLock()
        self._server = LocalServer(self._handle)
        self._git: Any = None
        self._git_error: str | None = None
        self._ids: dict[str, Iterator[int]] = {}
        self._first_id = first_id
        self._faults: list[Fault] = []
        self._holds: list[Hold] = []
        self._calls: list[CallT] = []
        self._validation_errors: list[str] = []
        self._auth_failures: list[str] = []
        self._unimplemented: list[str] = []
        self._response_errors: list[str] = []

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Self:
        self._server.start()
        if self.git_root is not None and self._git is None:
            self.git_root.mkdir(parents=True, exist_ok=True)
            try:
                from tests.support.git_http import GitHttpServer
            except ImportError as exc:
                self._git_error = f"tests/support/git_http.py is not available ({exc})"
            else:
                self._git = GitHttpServer(self.git_root, self._git_authorize)
                self._git.start()
        return self

    def stop(self) -> None:
        git, self._git = self._git, None
        stopper = None
        if git is not None:  # both servers wait out a poll interval: stop them side by side
            name = f"{type(self).__name__.lower()}-git-stop"
            stopper = threading.Thread(target=git.stop, name=name)
            stopper.start()
        self._server.stop()
        if stopper is not None:
            stopper.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The fake's base URL (what :meth:`env` hands the bot)."""
        return self._server.url

    @property
    def git(self) -> Any:
        """The :class:`tests.support.git_http.GitHttpServer` (``requests``, ``fail_next``)."""
        if self._git is None:
            raise RuntimeError(self._git_error or "no git server: pass git_root and start()")
        return self._git

    @property
    def git_url(self) -> str:
        """Where git is served: by default on the API's origin (see :meth:`_pass_through`)."""
        return self.url

    def clone_url(self, full_name: str) -> str:
        return f"{self.git_url}/{full_name}.git"

    def make_bare_repo(self, full_name: str, source: Path | None = None) -> Path:
        """``git_root/<full_name>.git``: a bare clone of ``source`` (else empty), which accepts
        pushes over HTTP (``http.receivepack``: git http-backend refuses them otherwise, as no
        REMOTE_USER is set)."""
        if self.git_root is None:
            raise RuntimeError("no git_root")
        path = self.git_root / f"{full_name}.git"
        path.parent.mkdir(parents=True, exist_ok=True)
        if source is not None:
            run_git("clone", "-q", "--bare", str(source), str(path))
        else:
            run_git("init", "-q", "--bare", "-b", "main", str(path))
        run_git("--git-dir", str(path), "config", "http.receivepack", "true")
        return path

    # ------------------------------------------------------------------ faults
    def inject(
        self,
        method: str | None = None,
        path: str = r".*",
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        delay: float = 0.0,
        times: int | None = 1,
    ) -> Fault:
        """Fail the next ``times`` API requests whose method and raw path (regex, full match,
        no query) match: answer ``status`` (``body`` defaults to the forge's message for it);
        ``status=None`` only delays them by ``delay`` seconds."""
        return self._add_fault(
            self._fault_type(
                method=method,
                path=re.compile(path),
                status=status,
                headers={k.lower(): str(v) for k, v in (headers or {}).items()},
                body=body,
                delay=delay,
                times=times,
            )
        )

    def hold(self, method: str, path: str) -> Hold:
        """Hold every ``method`` request whose raw path (regex, full match) matches, until
        ``release()`` (or the fake stops)."""
        held = Hold(method.upper(), re.compile(path))
        with self._lock:
            self._holds.append(held)
        return held

    def _wait_if_held(self, req: Request) -> bool:
        """Wait while a hold has this request; whether it was dropped."""
        with self._lock:
            held = next(
                (
                    h
                    for h in self._holds
                    if not h.reached.is_set()
                    and h.method == req.method.upper()
                    and h.path.fullmatch(req.path)
                ),
                None,
            )
            if held is None:
                return False
            held.reached.set()
        while not held.released.wait(0.05):
            if self._server.stopping.is_set():
                return True
        return held.dropped

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def _add_fault(self, fault: FaultT) -> FaultT:
        with self._lock:
            self._faults.append(fault)
        return fault

    # ------------------------------------------------------------------ observing
    @property
    def calls(self) -> list[CallT]:
        with self._lock:
            return list(self._calls)

    def calls_summary(self) -> list[str]:
        with self._lock:
            return [c.summary() for c in self._calls]

    def reset_calls(self) -> None:
        with self._lock:
            self._calls.clear()

    @property
    def validation_errors(self) -> list[str]:
        """Requests that depart from what the forge accepts: ``"METHOD /path: what"``."""
        with self._lock:
            return list(self._validation_errors)

    @property
    def auth_failures(self) -> list[str]:
        with self._lock:
            return list(self._auth_failures)

    @property
    def unimplemented(self) -> list[str]:
        """Described operations the fake does not serve (answered 501)."""
        with self._lock:
            return list(self._unimplemented)

    @property
    def response_errors(self) -> list[str]:
        """The fake's own answers that depart from the description (a bug in the fake)."""
        with self._lock:
            return list(self._response_errors)

    def assert_clean(self) -> None:
        """No validation error, auth failure, unserved operation or malformed answer."""
        with self._lock:
            problems = {
                "validation_errors": self._validation_errors,
                "auth_failures": self._auth_failures,
                "unimplemented": self._unimplemented,
                "response_errors": self._response_errors,
            }
            if any(problems.values()):
                lines = [f"{k}: {v}" for k, v in problems.items() if v]
                lines.append("calls: " + ", ".join(c.summary() for c in self._calls))
                raise AssertionError("\n".join(lines))

    def wait_for(
        self,
        predicate: Callable[[], T],
        timeout: float = 10.0,
        *,
        interval: float = 0.02,
        message: str = "",
    ) -> T:
        """Poll ``predicate`` until it returns something truthy, and return that."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"timed out after {timeout} s waiting{': ' + message if message else ''}; "
                    f"calls: {self.calls_summary()}"
                )
            time.sleep(interval)

    # ------------------------------------------------------------------ request pipeline
    def _handle(self, req: Request) -> Response:
        passed = self._pass_through(req)
        if passed is not None:
            return passed
        if self._wait_if_held(req):
            return Response(502, {"message": "held and dropped"})
        call = self._new_call(req)
        fault: Fault | None = None
        try:
            with self._lock:
                response, fault = self._process(req, call)
        except Reject as rej:
            response = rej.response
            if rej.kind is not None:
                self._record(rej.kind, req, rej.message, call)
        response.headers = {**self._default_headers(), **response.headers}
        with self._lock:
            call.status = response.status
            call.response = copy.deepcopy(response.body)
            call.fault = fault
            self._calls.append(call)
        return response

    def _new_call(self, req: Request) -> CallT:
        """The record of an API request, before it is answered."""
        raise NotImplementedError

    def _process(self, req: Request, call: CallT) -> tuple[Response, Fault | None]:
        """Check and answer an API request (raise :class:`Reject` to refuse it)."""
        raise NotImplementedError

    def _git_authorize(self, header: str | None) -> bool:
        """Whether git over HTTP takes this ``Authorization`` header."""
        raise NotImplementedError

    def _pass_through(self, req: Request) -> Response | None:
        """The answer to a request that is no API call (e.g. git on the API's origin)."""
        return None

    def _default_headers(self) -> dict[str, str]:
        """Headers on every API answer (the answer's own win)."""
        return {}

    def _record(self, kind: str, req: Request, message: str, call: CallT) -> None:
        line = f"{req.method} {req.path}: {message}"
        with self._lock:
            getattr(self, f"_{kind}").append(line)
            call.errors.append(self._call_error(line, message))

    def _call_error(self, line: str, message: str) -> str:
        """What a refused call's ``errors`` gets: by default the problem list's line."""
        return line

    def _with_fault(
        self, req: Request, serve: Callable[[], Response]
    ) -> tuple[Response, Fault | None]:
        """``serve()`` (the request's effect and answer) under the first matching fault: one
        with a status answers instead of it (after it, with :meth:`_answers_after`); one
        without only delays the answer and adds its headers."""
        fault = self._take_fault(req.method, req.path)
        if fault is not None and fault.status is not None and not self._answers_after(fault):
            return self._fault_response(fault), fault
        response = serve()
        if fault is not None and fault.status is not None:
            return self._fault_response(fault), fault
        if fault is not None:
            response.delay = fault.delay
            response.headers.update(fault.headers)
        return response, fault

    def _take_fault(self, method: str, path: str) -> Fault | None:
        for fault in self._faults:
            if fault.matches(method, path):
                fault.hits += 1
                return fault
        return None

    def _answers_after(self, fault: Fault) -> bool:
        """Whether ``fault`` lets the request take effect before answering (a lost response)."""
        return False

    def _fault_response(self, fault: Fault) -> Response:
        status = fault.status or 500
        headers = dict(fault.headers)
        body = fault.body
        if body is None:
            body = self._fault_body(status, headers)
        return Response(status, body, headers, delay=fault.delay)

    def _fault_body(self, status: int, headers: dict[str, str]) -> Any:
        """The body of an injected ``status`` without one (``headers`` may be amended)."""
        return {"message": "injected fault"}

    # ------------------------------------------------------------------ git
    def _proxy_git(self, req: Request) -> Response:
        """Pass a git request to the git server, for a forge serving git on the API's origin."""
        parts = urlsplit(self.git.url)
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
        try:
            headers = self._git_request_headers(req)
            conn.request(req.method, req.target, body=req.body or None, headers=headers)
            answer = conn.getresponse()
            payload = answer.read()
        finally:
            conn.close()
        kept = {k.lower(): v for k, v in answer.getheaders() if k.lower() not in HOP_HEADERS}
        return Response(answer.status, payload, kept)

    def _git_request_headers(self, req: Request) -> dict[str, str]:
        """The request headers :meth:`_proxy_git` passes on."""
        return {k: v for k, v in req.headers.items() if k not in HOP_HEADERS}

    def _bare_repo(self, full_name: str) -> Path | None:
        if self.git_root is None:
            return None
        path = self.git_root / f"{full_name}.git"
        return path if path.is_dir() else None

    def _rev_parse(self, full_name: str, ref: str) -> str | None:
        """``ref`` in the bare repository: its sha, "" when it has no such ref, None when
        there is no bare repository."""
        bare = self._bare_repo(full_name)
        if bare is None:
            return None
        out = subprocess.run(
            ["git", "--git-dir", str(bare), "rev-parse", "--verify", "-q", ref],
            capture_output=True,
            text=True,
            check=False,
        )
        return out.stdout.strip() if out.returncode == 0 else ""

    def _has_commit(self, full_name: str, sha: str) -> bool | None:
        """Whether the bare repository holds commit ``sha``; None when there is none."""
        bare = self._bare_repo(full_name)
        if bare is None:
            return None
        out = subprocess.run(
            ["git", "--git-dir", str(bare), "cat-file", "-e", f"{sha}^{{commit}}"],
            capture_output=True,
            check=False,
        )
        return out.returncode == 0

    # ------------------------------------------------------------------ paging
    def _page_of(
        self, req: Request, items: list[T], size_param: str, size: int
    ) -> tuple[list[T], dict[str, str]]:
        """The page of ``items`` the query asks for (``page``, ``size`` a page) and the Link
        relations that apply (``next``, ``last``, ``prev``, ``first``) to this path."""
        page = max(1, int(req.query.get("page") or 1))
        last = max(1, -(-len(items) // size))

        def link(n: int) -> str:
            query = {**req.query, size_param: str(size), "page": str(n)}
            return f"<{self.url}{req.path}?{urlencode(query)}>"

        rels: dict[str, str] = {}
        if page < last:
            rels.update(next=link(page + 1), last=link(last))
        if page > 1:
            rels.update(prev=link(page - 1), first=link(1))
        return items[(page - 1) * size : page * size], rels

    # ------------------------------------------------------------------ ids
    def _next_id(self, kind: str) -> int:
        counter = self._ids.setdefault(kind, itertools.count(self._first_id))
        return next(counter)


class DescribedForge(FakeForgeBase[DescribedCallT]):
    """A fake whose API requests are checked against a recorded description (:attr:`api`).

    One request, first failure answers: route (``_match``) and path parameters → 404;
    credentials (``_authenticate``); query parameters, then the JSON body (the schema, then
    ``_documented_rules``) → the forge's validation answer (``_invalid``; ``_not_json``);
    a matching fault; the repository (``_authorize_repo``); the handler ``_op_<name>``
    (``_handler_name``), else 501 (``_unserved``). 2xx answers are checked against the
    response schema when ``check_responses`` (``response_errors``: a bug in the fake).
    """

    api: OpenApi
    check_responses: bool

    def _process(self, req: Request, call: DescribedCallT) -> tuple[Response, Fault | None]:
        try:
            op, params = self._match(req)
        except RouteError as exc:
            raise Reject(self._not_found(), "validation_errors", str(exc)) from None
        call.template, call.operation_id = op.template, op.operation_id
        problems = self.api.check_params(op, params, "path")
        if problems:
            raise Reject(self._not_found(), "validation_errors", join_problems(problems))
        auth = self._authenticate(op, req, call)
        problems = self.api.check_params(op, req.query, "query")
        if problems:
            raise Reject(self._invalid(op, problems), "validation_errors", join_problems(problems))
        body, present = parse_json(req.body)
        if body is INVALID:
            raise Reject(self._not_json(op), "validation_errors", "request body is not JSON")
        call.json = body if present else None
        problems = self.api.check_body(op, body, present=present)
        if not problems and present:
            problems = self._documented_rules(op, body)
        if problems:
            raise Reject(self._invalid(op, problems), "validation_errors", join_problems(problems))
        ctx = self._context(req, op, params, body if present else None, auth)
        return self._with_fault(req, lambda: self._serve(req, op, ctx))

    def _serve(self, req: Request, op: Operation, ctx: Any) -> Response:
        ctx.repo = self._authorize_repo(ctx)
        handler = getattr(self, "_op_" + self._handler_name(op), None)
        if handler is None:
            raise Reject(
                self._unserved(op),
                "unimplemented",
                f"{op.template} ({op.operation_id}) is not served by the fake",
            )
        response: Response = handler(ctx)
        if self.check_responses and 200 <= response.status < 300:
            for p in self.api.check_response(op, response.status, response.body):
                self._response_errors.append(
                    f"{op.method} {req.path} {response.status}: {p.message}"
                )
        return response

    def _match(self, req: Request) -> tuple[Operation, dict[str, str]]:
        """The request's operation and path parameters (:class:`RouteError`: none)."""
        return self.api.match(req.method, req.path)

    def _authenticate(self, op: Operation, req: Request, call: DescribedCallT) -> Any:
        """Check the credentials (raise :class:`Reject`); what it returns reaches ``_context``."""
        raise NotImplementedError

    def _documented_rules(self, op: Operation, body: Any) -> list[Problem]:
        """What the forge refuses in a body that the description cannot say."""
        return []

    def _context(
        self, req: Request, op: Operation, params: dict[str, str], body: Any, auth: Any
    ) -> Any:
        """What a handler gets (it must have a ``repo`` attribute, set before it runs)."""
        raise NotImplementedError

    def _authorize_repo(self, ctx: Any) -> Any:
        """The repository the request names (raise :class:`Reject` when it may not be used)."""
        return None

    def _handler_name(self, op: Operation) -> str:
        return op.operation_id

    def _not_found(self) -> Response:
        raise NotImplementedError

    def _invalid(self, op: Operation, problems: list[Problem]) -> Response:
        raise NotImplementedError

    def _not_json(self, op: Operation) -> Response:
        return self._invalid(op, [Problem("", "invalid", "request body is not JSON")])

    def _unserved(self, op: Operation) -> Response:
        raise NotImplementedError


# ---------------------------------------------------------------------------- helpers


def run_git(*args: str) -> str:
    """``git args``, isolated from the machine's and user's configuration."""
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    proc = subprocess.run(["git", *args], capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def parse_json(raw: bytes) -> tuple[Any, bool]:
    """A request body as (value, present); the value is :data:`INVALID` when it is no JSON."""
    if not raw.strip():
        return None, False
    try:
        return json.loads(raw), True
    except ValueError:
        return INVALID, True


def split_auth(value: str | None) -> tuple[str | None, str | None]:
    """An ``Authorization`` value as (scheme, credential)."""
    if value is None:
        return None, None
    scheme, _, credential = value.strip().partition(" ")
    credential = credential.strip()
    if not credential:
        return None, scheme or None
    return scheme, credential


def link_header(rels: Mapping[str, str], order: tuple[str, ...]) -> str:
    """A Link header of ``rels`` (relation → ``<url>``), in ``order``."""
    return ", ".join(f'{rels[rel]}; rel="{rel}"' for rel in order if rel in rels)


def redacted(headers: Mapping[str, str], *secrets: str) -> dict[str, str]:
    """``headers`` with Authorization cut to its scheme and the ``secrets`` headers blanked."""
    out = dict(headers)
    for name in secrets:
        if name in out:
            out[name] = "<redacted>"
    if "authorization" in out:
        scheme = out["authorization"].strip().partition(" ")[0]
        out["authorization"] = f"{scheme} <redacted>"
    return out
