"""The import rules of docs/architecture.md, read from the ``ast`` of every module.

Five rules: the pure cores import no I/O (network, Redis, subprocess, clock, environment,
disk) and no module that is not itself a pure core; the web layer imports no forge adapter;
the forge adapters import nothing from the checks; the gate imports nothing that runs it;
no package imports, through others, a package that imports it (no cycle between packages);
and no module of ``workers/`` comes back to itself through what it imports.
Where a module breaks a rule today, the pair is a known exception below, with the issue item
that removes it: the list may only shrink (a stale entry fails, so it is deleted once fixed).
"""

from __future__ import annotations

import ast
import fnmatch
import re
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Set
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "workers")

# Pure cores: values in, values out. A pattern names a module or, with ``.*``, a package.
PURE = (
    "bot",  # the package root holds only the version
    "bot.gate",
    "bot.gate.*",
    "bot.registry",
    "bot.registry.*",
    "bot.webhooks",
    "bot.webhooks.*",
    "bot.checks.compare",
    "bot.checks.findings",
    "bot.checks.output",
    "bot.checks.markdown_text",
    "bot.checks.approval_summary",
    "bot.checks.headline",
    "bot.render",
    "bot.render.*",
    "bot.config",
    "bot.config.*",
    "bot.errors",
    "bot.paths",
    "bot.repos",
    "bot.repos.*",
    "bot.git",  # the package root is empty
    "bot.git.snapshot",
    "bot.git.overlay",
    "bot.ignore",
    "bot.ignore.*",
    "bot.yaml",
    "bot.yaml.*",
    "bot.forges.base",
    "bot.forges.github.manifest",
    "bot.forges.github.redelivery",
    "bot.forges.http.redaction",
    "bot.forges.responses",
    "bot.forges.plans",
    "bot.forges.clipping",
    "bot.forges.buckets",
    "bot.checks.request",
    "bot.state.base",
    "bot.state.records",  # audit records as JSON
    "bot.state.check_facts",  # a check's facts as values, read back from JSON
    "bot.checks.facts",
    "bot.changes.branch",
    "bot.changes.pr_body",
    "bot.changes.marker",
    "bot.changes.safety",
    "bot.changes.locate",
    "bot.changes.plan",
    "bot.approvals",
    "bot.approvals.*",
    "bot.web.markdown",
    "bot.commands",
    "bot.commands.*",
    "bot.onboarding",
    "bot.onboarding.*",
    "bot.reconcile",
    "bot.reconcile.*",
)
# Reads only the data shipped inside the package (the recorded Kubernetes discovery), once:
# constant input, like the module's own source, so it may use importlib.resources.
PACKAGE_DATA = {"bot.registry.builtin": ("importlib",)}

# What a pure core may not import. `os` is refused whole, `os.path` too: repository paths are
# POSIX strings, so pure code uses `posixpath` (string arithmetic, never the file system).
# `datetime` stays allowed for its value types; reading the clock is `time`.
FORBIDDEN_STDLIB = frozenset(
    {
        "asyncio", "concurrent", "ctypes", "dbm", "fcntl", "ftplib", "getpass", "glob",
        "http", "imaplib", "importlib", "io", "logging", "mmap", "multiprocessing", "os",
        "pathlib", "pickle", "platform", "pwd", "random", "sched", "secrets", "select",
        "selectors", "shelve", "shutil", "signal", "smtplib", "socket", "socketserver",
        "sqlite3", "ssl", "subprocess", "sys", "tarfile", "tempfile", "time",
        "urllib.request", "uuid", "webbrowser", "zipfile",
    }
)  # fmt: skip
# Third-party libraries a pure core may use: parsers and escaping, nothing that does I/O.
PURE_THIRD_PARTY = frozenset(
    {"markupsafe", "orjson", "pydantic", "pydantic_core", "ruamel", "yaml"}
)
# A pure core may hold a lock around a cache it is handed (results stay a function of the
# inputs), but starts no thread and waits on nothing else: of `threading`, only these.
PURE_THREADING = frozenset({"Lock", "RLock"})
# Builtins that read or write the outside world.
FORBIDDEN_CALLS = frozenset({"open", "input", "print", "breakpoint", "exec", "eval", "__import__"})

# The forge adapters: modules of bot.forges named after a forge, minus the pure manifest flow.
ADAPTER = (
    "bot.forges.github.*",
    "bot.forges.gitlab.*",
    "bot.forges.gitea.*",
    "bot.forges.local*",
)

# What runs the gate, which the gate therefore never imports (it is handed values instead).
OUTSIDE_THE_GATE = ("bot.checks*", "bot.cli*", "bot.state*", "bot.forges*", "bot.web*", "workers*")

# (importer, imported) pairs that break a rule today, each with what removes it (issue 12).
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True, slots=True)
class Import:
    importer: str
    imported: str  # a dotted module name, resolved against the project's own files
    line: int


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))
    }


MODULES = _modules()


def _resolve(module: str, level: int, importer: str, is_package: bool) -> str:
    if not level:
        return module
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def imports_of(name: str) -> Iterator[Import]:
    """Every import in the module, type-only and function-local ones included."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module or "", node.level, name, path.name == "__init__.py")
            if base == "__future__":
                continue
            for alias in node.names:
                # `from bot.forges import github` imports the submodule, not a name of bot.forges.
                sub = f"{base}.{alias.name}"
                yield Import(name, sub if sub in MODULES else base, node.lineno)


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def is_pure(name: str) -> bool:
    return _matches(name, PURE)


def is_adapter(name: str) -> bool:
    return _matches(name, ADAPTER) and not is_pure(name)


def _top(imported: str) -> str:
    return imported.split(".")[0]


def _forbidden_for_pure(imp: Import) -> str | None:
    """Why a pure core may not import this, or None when it may."""
    target, top = imp.imported, _top(imp.imported)
    if top in PACKAGES:
        if is_pure(target) or target in PACKAGE_DATA:
            return None
        return "a module that is not a pure core"
    if top in sys.stdlib_module_names:
        if top in PACKAGE_DATA.get(imp.importer, ()):
            return None
        if top in FORBIDDEN_STDLIB or target in FORBIDDEN_STDLIB:
            return "I/O, a clock or the environment"
        return None
    return None if top in PURE_THIRD_PARTY else "a third-party library that is not a parser"


def violations() -> list[tuple[Import, str]]:
    found: list[tuple[Import, str]] = []
    for name in MODULES:
        pure = is_pure(name) or name in PACKAGE_DATA
        for imp in imports_of(name):
            target = imp.imported
            if pure and (why := _forbidden_for_pure(imp)) is not None:
                found.append((imp, f"a pure core imports {why}"))
            if name.startswith("bot.web") and is_adapter(target):
                found.append((imp, "the web layer imports a forge adapter"))
            if name.startswith("bot.forges") and target.startswith("bot.checks"):
                found.append((imp, "a forge adapter imports the checks"))
            if name.startswith("bot.gate") and _matches(target, OUTSIDE_THE_GATE):
                found.append((imp, "the gate imports what runs it"))
    return found


def _said(found: list[tuple[Import, str]]) -> str:
    return "\n".join(
        f"{MODULES[i.importer].relative_to(ROOT)}:{i.line}: {i.importer} -> {i.imported}: {why}"
        for i, why in found
    )


def test_the_import_rules_hold() -> None:
    found = [
        (i, why) for i, why in violations() if (i.importer, i.imported) not in KNOWN_EXCEPTIONS
    ]
    assert not found, "import rules broken (docs/architecture.md):\n" + _said(found)


def test_every_known_exception_is_still_needed() -> None:
    seen = {(i.importer, i.imported) for i, _ in violations()}
    stale = sorted(set(KNOWN_EXCEPTIONS) - seen)
    assert not stale, f"fixed, so delete from KNOWN_EXCEPTIONS: {stale}"


def import_graph(package: str) -> dict[str, set[str]]:
    """Which of the package's modules each of its modules imports (type-only and
    function-local imports included: a circle through them is still one)."""
    inside = [name for name in MODULES if name == package or name.startswith(f"{package}.")]
    return {
        name: {i.imported for i in imports_of(name) if i.imported in inside and i.imported != name}
        for name in inside
    }


def module_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """A circle of imports from each module not already on a circle found, in order."""
    found: list[list[str]] = []
    done: set[str] = set()
    for start in sorted(graph):
        if (circle := _circle_from(graph, start, [], done)) is not None:
            found.append(circle)
            done.update(circle)
    return found


def _circle_from(
    graph: dict[str, set[str]], name: str, path: list[str], done: set[str]
) -> list[str] | None:
    """A circle back onto ``path`` reached from ``name`` (depth first), or None."""
    if name in path:
        return [*path[path.index(name) :], name]
    if name in done:  # nothing reached from it comes back
        return None
    path.append(name)
    for after in sorted(graph.get(name, ())):
        if (circle := _circle_from(graph, after, path, done)) is not None:
            return circle
    path.pop()
    done.add(name)
    return None


def test_no_import_circle_among_the_workers() -> None:
    # A command handler returns its outcome instead of appending to the command job's run,
    # so no workers/ module imports one that imports it back.
    circles = module_circles(import_graph("workers"))
    assert not circles, "\n".join(" -> ".join(c) for c in circles)


def test_the_circle_rule_itself() -> None:
    assert module_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        ["a", "b", "c", "a"]
    ]
    assert module_circles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []
    # The circle this test was written for, as it was: commands -> changes -> commands.
    assert module_circles({"w.commands": {"w.changes"}, "w.changes": {"w.commands"}}) == [
        ["w.changes", "w.commands", "w.changes"]
    ]


def _pure_nodes() -> Iterator[tuple[str, ast.AST]]:
    """Every syntax node of every pure core, with its file's path for a message."""
    for name, path in MODULES.items():
        if is_pure(name):
            shown = str(path.relative_to(ROOT))
            yield from ((shown, node) for node in ast.walk(ast.parse(path.read_text())))


def test_pure_cores_call_no_io_builtin() -> None:
    found = [
        f"{where}:{node.lineno}: {node.func.id}()"
        for where, node in _pure_nodes()
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in FORBIDDEN_CALLS
    ]
    assert not found, "\n".join(found)


def test_pure_cores_use_threading_only_for_locks() -> None:
    found = []
    for where, node in _pure_nodes():
        if isinstance(node, ast.ImportFrom) and node.module == "threading":
            used = [(alias.name, node.lineno) for alias in node.names]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "threading"
        ):
            used = [(node.attr, node.lineno)]
        else:
            continue
        found += [f"{where}:{line}: threading.{u}" for u, line in used if u not in PURE_THREADING]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("pattern", [*PURE, *PACKAGE_DATA])
def test_every_named_module_exists(pattern: str) -> None:
    # A renamed module must be renamed here too, or its rule would silently stop applying.
    assert any(fnmatch.fnmatchcase(name, pattern) for name in MODULES), pattern


# The rules themselves, on imports written for the purpose: a rule that cannot fail is none.
@pytest.mark.parametrize(
    ("importer", "imported", "refused"),
    [
        ("bot.gate.run", "os", True),
        ("bot.gate.run", "os.path", True),
        ("bot.gate.run", "posixpath", False),
        ("bot.gate.run", "time", True),
        ("bot.gate.run", "urllib.request", True),
        ("bot.gate.run", "urllib.parse", False),
        ("bot.gate.run", "httpx", True),
        ("bot.gate.run", "redis", True),
        ("bot.gate.run", "threading", False),  # for a lock only: see the test above
        ("bot.gate.run", "asyncio", True),
        ("bot.gate.run", "yaml", False),
        ("bot.gate.run", "bot.settings", True),
        ("bot.gate.run", "bot.queueing.base", True),
        ("bot.gate.run", "bot.forges.github.adapter", True),
        ("bot.gate.run", "bot.forges.base", False),
        ("bot.webhooks.parse", "subprocess", True),
        ("bot.registry.builtin", "importlib", False),
        ("bot.registry.crd", "importlib", True),
    ],
)
def test_the_purity_rule_itself(importer: str, imported: str, refused: bool) -> None:
    assert (_forbidden_for_pure(Import(importer, imported, 1)) is not None) is refused


def test_the_layer_rules_classify_adapters() -> None:
    assert is_adapter("bot.forges.github.payloads")
    assert is_adapter("bot.forges.local")
    assert not is_adapter("bot.forges.github.manifest")  # pure: the web setup page uses it
    assert not is_adapter("bot.forges.base")


# Rule 5: the packages form no cycle. A node is a first-level package or top-level module of
# bot (``bot.forges``, ``bot.paths``), the package root ``bot``, or ``workers`` as a whole.
Graph = Mapping[str, Set[str]]


def package_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "bot" else parts[0]


@cache
def package_imports() -> dict[tuple[str, str], list[Import]]:
    """Each edge between two packages, with the imports that make it."""
    edges: dict[tuple[str, str], list[Import]] = {}
    for name in MODULES:
        for imp in imports_of(name):
            source, target = package_of(name), package_of(imp.imported)
            if _top(imp.imported) not in PACKAGES or source == target:
                continue
            found = edges.setdefault((source, target), [])
            if imp not in found:  # one line per import, however many names it takes
                found.append(imp)
    return edges


def _graph(edges: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for source, target in edges:
        graph.setdefault(source, set()).add(target)
        graph.setdefault(target, set())
    return graph


def _reachable(graph: Graph, start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def cycles(graph: Graph) -> list[list[str]]:
    """One shortest cycle through each group of packages that reach one another, as the
    packages in order (the first again at the end), from the group's first package by name."""
    found: list[list[str]] = []
    done: set[str] = set()
    reach = {node: _reachable(graph, node) for node in graph}
    for node in sorted(graph):
        group = {other for other in reach[node] if node in reach[other]}
        if node in done or len(group) < 2:
            continue
        done |= group
        found.append(_shortest_cycle(graph, node, group))
    return found


def _shortest_cycle(graph: Graph, start: str, group: Set[str]) -> list[str]:
    """Breadth first from ``start`` until an edge leads back to it, inside ``group``."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        for nxt in sorted(graph[current] & group):
            if nxt == start:
                path = [current]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if nxt not in came_from:
                came_from[nxt] = current
                queue.append(nxt)
    raise AssertionError(f"{start} is in a group of packages that reach one another")


def _said_cycle(cycle: list[str], edges: Mapping[tuple[str, str], list[Import]]) -> str:
    lines = [" -> ".join(cycle)]
    for source, target in pairwise(cycle):
        lines.append(f"  {source} -> {target}:")
        lines += [
            f"    {MODULES[i.importer].relative_to(ROOT)}:{i.line}: "
            f"{i.importer} imports {i.imported}"
            for i in edges[source, target]
        ]
    return "\n".join(lines)


def test_no_package_import_cycle() -> None:
    edges = package_imports()
    found = cycles(_graph(edges))
    assert not found, "packages import each other (docs/architecture.md):\n" + "\n".join(
        _said_cycle(cycle, edges) for cycle in found
    )


def test_the_package_graph_itself() -> None:
    assert package_of("bot.forges.github.adapter") == "bot.forges"
    assert package_of("bot.paths") == "bot.paths"
    assert package_of("bot") == "bot"
    assert package_of("workers.jobs") == "workers"
    edges = package_imports()
    # Edges that exist, one way, once the shared words moved down.
    assert ("bot.webhooks", "bot.repos") in edges
    assert ("bot.forges", "bot.repos") in edges
    assert ("bot.state", "bot.approvals") in edges
    assert ("bot.changes", "bot.onboarding") in edges
    assert ("workers", "bot.checks") in edges


# The ground floor: what several layers share, importing nothing of the bot's packages.
GROUND_FLOOR = ("bot", "bot.errors", "bot.paths", "bot.repos")


@pytest.mark.parametrize("package", GROUND_FLOOR)
def test_the_ground_floor_imports_no_package(package: str) -> None:
    edges = sorted(package_imports().items())
    above = [i for (source, _), found in edges if source == package for i in found]
    assert not above, _said([(i, "the ground floor imports a package") for i in above])


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ([("a", "b"), ("b", "c")], []),
        ([("a", "b"), ("b", "a")], [["a", "b", "a"]]),
        ([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")], [["a", "b", "c", "a"]]),
        ([("a", "b"), ("b", "c"), ("c", "a"), ("a", "c")], [["a", "c", "a"]]),
        ([("a", "b"), ("b", "a"), ("c", "d"), ("d", "c")], [["a", "b", "a"], ["c", "d", "c"]]),
    ],
)
def test_the_cycle_rule_itself(edges: list[tuple[str, str]], expected: list[list[str]]) -> None:
    assert cycles(_graph(edges)) == expected


# ---- every store in bot/state: the key names in one module ------------------------------------

# Where a Redis connection may be made or a Redis API used: the stores, the queue, and the
# command line's composition (it builds the stores it hands on).
REDIS_USERS = ("bot.state", "bot.state.*", "bot.queueing", "bot.queueing.*", "bot.cli.*")
# A key: ``ichor:`` and a word, no blank (``ichor: approve …`` is a title, ``ichor:approval
# v1`` a reply's marker).
KEY_LIKE = re.compile(r"ichor:[a-z][a-z-]*(:|$)")


def _string_starts(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr) and node.values:
            first = node.values[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield node.lineno, first.value


def test_every_redis_key_is_named_in_the_keys_module() -> None:
    found = []
    for name, path in _modules().items():
        if name == "bot.state.keys":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and n.body
            and isinstance(n.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if id(node) in docstrings:
                continue
            texts = (
                list(_string_starts(node)) if isinstance(node, ast.Constant | ast.JoinedStr) else []
            )
            found += [
                f"{path.relative_to(ROOT)}:{line}: {text!r}"
                for line, text in texts
                if KEY_LIKE.match(text)
            ]
    found = list(dict.fromkeys(found))  # an f-string is met once and again through its parts
    assert found == [], "a Redis key named outside bot/state/keys.py:\n" + "\n".join(found)


def test_only_the_stores_the_queue_and_the_cli_use_redis() -> None:
    found = []
    for name, path in _modules().items():
        if _matches(name, REDIS_USERS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported = [node.module]
            else:
                continue
            if any(i == "redis" or i.startswith("redis.") for i in imported):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == [], "redis used outside bot/state, bot/queueing and bot/cli:\n" + "\n".join(
        found
    )


# Rule 7 of docs/architecture.md: the workers' side is synchronous, a job calls
# its adapter, git and Redis directly. Only the web process runs an event loop.
SYNCHRONOUS = ("workers*", "bot.checks*", "bot.changes*", "bot.forges*", "bot.git*", "bot.state*")
ASYNC_MODULES = frozenset(
    {"asyncio", "anyio", "redis.asyncio", "gidgethub.httpx", "gidgethub.aiohttp"}
)


def test_the_workers_side_runs_no_event_loop() -> None:
    found = []
    for name, path in _modules().items():
        if not _matches(name, SYNCHRONOUS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.AsyncFunctionDef | ast.Await | ast.AsyncWith | ast.AsyncFor):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: async code")
        found += [
            f"{path.relative_to(ROOT)}:{i.line}: imports {i.imported}"
            for i in imports_of(name)
            if i.imported in ASYNC_MODULES or _top(i.imported) in ASYNC_MODULES
        ]
    assert found == [], "an event loop on the workers' side:\n" + "\n".join(found)


# Rule 8 of docs/architecture.md: one request seam. Outside bot/forges/http no module sends an
# HTTP request or builds a client (the CLI's replay posts to the bot's own webhook, not a forge).
SEAM = ("bot.forges.http", "bot.forges.http.*", "bot.cli.replay")
HTTP_LIBRARIES = frozenset({"requests", "urllib.request", "http.client", "aiohttp", "urllib3"})


def test_every_forge_request_goes_through_the_seam() -> None:
    found = []
    for name, path in _modules().items():
        if _matches(name, SEAM):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "httpx"
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: calls httpx.{func.attr}")
        found += [
            f"{path.relative_to(ROOT)}:{i.line}: imports {i.imported}"
            for i in imports_of(name)
            if i.imported in HTTP_LIBRARIES or _top(i.imported) in HTTP_LIBRARIES
        ]
    assert found == [], "a request outside the seam (bot/forges/http):\n" + "\n".join(found)


def test_the_seam_rule_sees_a_request_and_a_library() -> None:
    tree = ast.parse("import httpx\nhttpx.Client()\n")
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert len(calls) == 1 and isinstance(calls[0].func, ast.Attribute)
    assert _top("requests.adapters") in HTTP_LIBRARIES
