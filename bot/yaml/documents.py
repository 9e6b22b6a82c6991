"""Read the YAML documents of one file: fast with libyaml, confirmed by a YAML 1.2 parser.

The fast path is libyaml's composer with our own resolver and builder, accepting what Kubernetes
tooling accepts: a bare ``=`` is ``"="``; a redefined anchor replaces the earlier one; an unknown
tag (``!env_var``, ``!!python/...``) gives the str, list or dict it is written on; a collection
mapping key (``{{ .Values.x }}``) becomes its source text. Only the JSON-like core tags are
interpreted (YAML 1.1, as PyYAML), so values are plain dict/list/str/int/float/bool/None.
A file libyaml rejects is read again with ruamel.yaml (YAML 1.2, slow); its reading wins when it
loads the file or reads more documents. Hostile input (bad encoding, deep nesting, alias or
merge expansion, cycles) gives an error result, never a hang or a crash. A key written twice in
one mapping is an error naming both lines, as YAML 1.2, kubectl and kustomize have it: the last
value silently winning could turn one kind of object into another. UTF-8 may carry a BOM;
UTF-16 with a BOM (which libyaml reads too) is transcoded to UTF-8 first.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, Final

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor as Yaml12Constructor
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import AliasEvent
from yaml.nodes import Node, ScalarNode, SequenceNode

from bot.yaml.keys import DuplicateKey, check_keys_once, check_own_keys
from bot.yaml.parsed import YamlDocument as YamlDocument  # re-exported: the reading's values
from bot.yaml.parsed import YamlFile as YamlFile
from bot.yaml.source import Outcome, Refused, Source

try:
    from yaml import CSafeLoader as _BaseLoader

    _LIBYAML = True
except ImportError:  # PyYAML built without libyaml: same results, slower
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

    _LIBYAML = False

MAX_DEPTH: Final = 1000
# ruamel.yaml reads ~0.3 MB/s: above this size a libyaml rejection is final, so time stays bounded.
MAX_CONFIRM_BYTES: Final = 1 << 20

_CORE = "tag:yaml.org,2002:"
_STR, _SEQ, _MAP, _MERGE = (_CORE + t for t in ("str", "seq", "map", "merge"))
_SCALAR_TAGS = frozenset(_CORE + t for t in ("null", "bool", "int", "float", "str"))
_TOO_DEEP = f"the document is nested deeper than {MAX_DEPTH} levels"


def parse_yaml(data: bytes, *, lines_under: frozenset[str] | None = None) -> YamlFile:
    """Every document of ``data`` in order; a document that cannot be read ends the tuple.

    With ``lines_under``, each mapping document also says where its top-level keys start and
    where the keys or items under the named top-level keys start (``YamlDocument.lines``).
    """
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError as exc:
            return _result(Source(data), Outcome(f"not valid UTF-16 at byte {exc.start}"))
    elif not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            return _result(Source(data), Outcome(f"not valid UTF-8 at byte {exc.start}", line))
        data = data.removeprefix(b"\xef\xbb\xbf")  # so marks index the text both parsers see
    src = Source(data, lines_under)
    fast = _read_libyaml(src, _FIRST_READ)
    if fast.redefined_anchor:
        fast = _read_libyaml(src, _RedefiningLoader)
    if fast.error is None:
        return YamlFile(tuple(fast.documents))
    if fast.final or len(data) > MAX_CONFIRM_BYTES:
        return _result(src, fast)
    slow = _read_yaml12(src)
    # A YAML 1.2 reading that got past libyaml's complaint and then hit a rule of ours (a key
    # twice, a limit) names the file's real problem.
    if slow.error is None or slow.final or len(slow.documents) > len(fast.documents):
        return _result(src, slow, confirmed=True)
    return _result(src, fast)


def _result(src: Source, outcome: Outcome, *, confirmed: bool = False) -> YamlFile:
    documents = outcome.documents
    if outcome.error is not None:
        error_line = src.clamp(outcome.error_line)
        start = src.next_content(outcome.resume, error_line)
        documents.append(YamlDocument(len(documents), start, None, outcome.error, error_line))
    return YamlFile(tuple(documents), confirmed_by_yaml12=confirmed)


# ---- libyaml ---------------------------------------------------------------------------------

_PLAIN_TAGS: dict[str, str] = {}  # plain scalar -> its tag, shared by all files (bounded)
# `=` (YAML 1.1's "value" type) and timestamps are left out: they resolve to plain strings.
_RESOLVERS = {
    first: [(tag, rx) for tag, rx in pairs if tag not in (_CORE + "value", _CORE + "timestamp")]
    for first, pairs in _BaseLoader.yaml_implicit_resolvers.items()
}


def _limits_nesting() -> bool:
    """Whether the libyaml in use refuses nesting past 1000 levels itself (0.2.6 does)."""
    if not _LIBYAML:  # PyYAML's Python parser: no limit
        return False
    try:
        loader = _BaseLoader("[" * (MAX_DEPTH + 1))
        try:
            loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        return "nesting depth" in str(getattr(exc, "problem", ""))
    return False


class _FastLoader(_BaseLoader):
    depth = 0

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        # libyaml calls this for every node; plain scalars repeat (keys above all), so cache them.
        if kind is not ScalarNode:
            return _SEQ if kind is SequenceNode else _MAP
        if not implicit[0]:
            return _STR
        tag = _PLAIN_TAGS.get(value)
        if tag is None:
            candidates = _RESOLVERS.get(value[:1], ())
            tag = next((t for t, rx in candidates if rx.match(value)), _STR)
            if len(value) <= 64:
                if len(_PLAIN_TAGS) >= 50_000:
                    _PLAIN_TAGS.clear()
                _PLAIN_TAGS[value] = tag
        return tag

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        # libyaml's composer recurses in C; libyaml 0.2.6 stops at 1000 levels, older ones do
        # not, and a deep enough document would overflow the C stack.
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Refused(_TOO_DEEP, current_node.start_mark.line + 1 if current_node else None)

    def ascend_resolver(self) -> None:
        self.depth -= 1


class _UncountedLoader(_FastLoader):
    """For a libyaml that limits nesting itself: the composer calls both hooks for every node,
    and with nothing to count, the cheapest callables taking those arguments stand in (about a
    tenth of a real tree's read)."""

    descend_resolver = slice  # type: ignore[assignment]
    ascend_resolver = tuple  # type: ignore[assignment]


# The loader of the first reading: ours counts levels only where libyaml does not.
_FIRST_READ: type[_FastLoader] = _UncountedLoader if _limits_nesting() else _FastLoader


class _RedefiningLoader(_FastLoader):
    """PyYAML's Python composer over libyaml's events, letting a later anchor replace one.

    Only for files where libyaml's composer refused a redefined anchor (YAML 1.2 allows it).
    """

    check_node, get_node = Composer.check_node, Composer.get_node  # not libyaml's C composer
    compose_document, compose_scalar_node = Composer.compose_document, Composer.compose_scalar_node
    compose_sequence_node = Composer.compose_sequence_node
    compose_mapping_node = Composer.compose_mapping_node

    def __init__(self, stream: bytes) -> None:
        super().__init__(stream)
        self.anchors: dict[Any, Node] = {}

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        event: Any = self.peek_event()
        if not isinstance(event, AliasEvent) and event.anchor is not None:
            self.anchors.pop(event.anchor, None)
        return Composer.compose_node(self, parent, index)  # type: ignore[arg-type]


def _read_libyaml(src: Source, kind: type[_FastLoader]) -> Outcome:
    loader: _FastLoader | None = None
    outcome, used = Outcome(final=False), 0
    try:
        loader = kind(src.data)  # the pure-Python reader checks characters here already
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                break
            value, used = _value(node, loader, _CONVERT, src, used)
            outcome.add(node, src, value)
    except yaml.reader.ReaderError as exc:
        # Characters are checked a buffer at a time, so what came before proves nothing.
        line = src.data.count(b"\n", 0, exc.position) + 1
        return Outcome(f"unacceptable character #x{exc.character:04x}: {exc.reason}", line)
    except yaml.MarkedYAMLError as exc:
        outcome.error, outcome.error_line = _describe(exc, src)
        outcome.final = "nesting depth" in str(exc.problem)
        outcome.error = _TOO_DEEP if outcome.final else outcome.error
        outcome.redefined_anchor = "found duplicate anchor" in str(exc.context)
    except (Refused, DuplicateKey) as exc:
        outcome.error, outcome.error_line, outcome.final = str(exc), exc.line, True
    except RecursionError:
        outcome.error, outcome.final = _TOO_DEEP, True
    except Exception as exc:  # a converter's error on odd input must not escape
        outcome.error = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
    finally:
        if loader is not None:
            loader.dispose()
    return outcome


# ---- building plain values, shared by both parsers ---------------------------------------------

Converter = Callable[[Any, Any], object]


def _converters(base: Any) -> dict[str, Converter]:
    def lenient(construct: Converter) -> Converter:
        # PyYAML's own resolver tags `0x_` an int and `._` a float, then cannot convert them.
        def convert(constructor: Any, node: Any) -> object:
            try:
                return construct(constructor, node)
            except (ValueError, LookupError):
                return node.value

        return convert

    names = ("bool", "int", "float")
    table = {_CORE + t: lenient(getattr(base, "construct_yaml_" + t)) for t in names}
    return table | {_CORE + "null": lambda constructor, node: None}


_CONVERT = _converters(SafeConstructor)


def _value(
    root: Any, constructor: Any, convert: dict[str, Converter], src: Source, used: int
) -> tuple[object, int]:
    """The plain value of one document, and the nodes the file's values have used so far.

    Only an alias to a collection lets a value outgrow its text or contain itself, so the
    graph is measured (linear, but a fifth of a real tree's read if done for every file with
    an ``&`` and a ``*``) when the build met a collection twice. Merge keys copy pairs while
    the value is built: those files are measured first.
    """
    if src.merges:
        used = _graph_size(root, used, src.budget)
    value, shared = _build(root, constructor, convert, src)
    if shared and not src.merges:
        used = _graph_size(root, used, src.budget)
    return value, used


def _build(
    root: Any, constructor: Any, convert: dict[str, Converter], src: Source
) -> tuple[object, bool]:
    """The plain value of one document's node graph, without recursion; aliases share values.
    Also whether a collection was reached twice (an alias to it, or a cycle): each collection
    is built once, so this is linear in the distinct nodes whatever their graph."""

    def scalar(node: Any) -> object:
        tag = node.tag
        if tag == _STR:
            return node.value
        if tag in convert:
            return convert[tag](constructor, node)
        if tag in (_SEQ, _MAP):
            raise _mismatch(node)
        return node.value  # an unknown tag, a timestamp, binary ...: the text as written

    shared = False

    def child(node: Any) -> object:
        nonlocal shared
        if node.id == "scalar":
            return scalar(node)
        value = made.get(id(node))
        if value is None:
            if node.tag in _SCALAR_TAGS or node.tag == (_SEQ if node.id == "mapping" else _MAP):
                raise _mismatch(node)
            value = made[id(node)] = {} if node.id == "mapping" else []
            pending.append(node)
        else:
            shared = True
        return value

    made: dict[int, Any] = {}
    pending: deque[Any] = deque()
    checked: set[int] = set()  # mappings whose own keys were checked, before any flattening

    def key_text(node: Any) -> str:
        return _key_text(node, src)

    top = child(root)
    while pending:
        node = pending.popleft()
        target = made[id(node)]
        if node.id == "sequence":
            target.extend(
                item.value if item.id == "scalar" and item.tag == _STR else child(item)
                for item in node.value
            )
            continue
        if src.merges:
            check_own_keys(node, checked, scalar, key_text)
            constructor.flatten_mapping(node)  # merged pairs come first, so own keys win
        name: object
        for key, item in node.value:
            # Plain strings are most keys and values: taken here without a call.
            if key.id != "scalar":  # a collection key (valid YAML, unhashable in Python)
                name = _key_text(key, src)  # is keyed by its source text
            else:
                name = key.value if key.tag == _STR else scalar(key)
            if item.id == "scalar" and item.tag == _STR:
                target[name] = item.value
            else:
                target[name] = child(item)
        if len(target) != len(node.value) and not src.merges:
            check_keys_once(node.value, scalar, key_text)  # only a lost value costs any time
    return top, shared


def _key_text(node: Any, src: Source) -> str:
    return " ".join(src.text[node.start_mark.index : node.end_mark.index].split())


def _mismatch(node: Any) -> ConstructorError:
    message = f"the tag {node.tag} cannot be used on a {node.id}"
    return ConstructorError(None, None, message, node.start_mark)


def _graph_size(root: Any, used: int, budget: int) -> int:
    """Nodes a walk of the built value would visit, plus the pairs merge keys copy.

    Each node is counted once (memoised on identity), so this is linear in the distinct nodes
    however large the expansion. A node met again while its own children are being counted is
    an alias inside its anchor: a cycle, refused.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    merge_work = 0
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, counted = stack.pop()
        ident = id(node)
        if node.id == "scalar" or (not counted and ident in sizes):
            continue
        children = [n for pair in node.value for n in pair] if node.id == "mapping" else node.value
        if not counted:
            if ident in open_nodes:
                message = "an alias refers to a collection that contains it"
                raise Refused(message, node.start_mark.line + 1)
            open_nodes.add(ident)
            stack.append((node, True))
            stack.extend((child, False) for child in children)
            continue
        open_nodes.discard(ident)
        total = 1 + sum(sizes.get(id(child), 1) for child in children)
        if node.id == "mapping" and any(key.tag == _MERGE for key, _ in node.value):
            merge_work += total  # flattening copies the merged pairs into this mapping
        if used + total + merge_work > budget:
            message = f"the file expands to over {budget} nodes through aliases or merge keys"
            raise Refused(message, root.start_mark.line + 1)
        sizes[ident] = total
    return used + sizes.get(id(root), 1) + merge_work


def _describe(exc: Any, src: Source) -> tuple[str, int | None]:
    """A parser error (either library's) as one line of text and its 1-based line."""
    problem, context = getattr(exc, "problem", None), getattr(exc, "context", None)
    message = f"{context}: {problem}" if context and problem else str(problem or context or exc)
    message = message.splitlines()[0] if message.strip() else type(exc).__name__
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return message, None
    line = src.lines[mark.line] if mark.line < len(src.lines) else b""
    rest = line.decode(errors="replace")[mark.column :]
    if message.endswith("found undefined alias") and rest[1:].split():
        message += f" {rest[1:].split()[0].rstrip(',]}')!r}"
    elif rest.startswith("\t") and "tab" not in message:
        message += " (a tab; YAML indentation must use spaces)"
    return message, int(mark.line) + 1


# ---- YAML 1.2 confirmation -------------------------------------------------------------------

_CONVERT_YAML12 = _converters(Yaml12Constructor)


def _read_yaml12(src: Source) -> Outcome:
    reader = YAML(typ="safe", pure=True)
    reader.allow_duplicate_keys = True  # checked on the nodes instead, by one rule for both
    reader.composer.warn_double_anchors = False  # YAML 1.2 lets a later anchor replace one
    outcome, used = Outcome(final=False), 0
    nodes: Iterator[Any] = reader.compose_all(src.text)
    try:
        for node in nodes:
            value, used = _value(node, reader.constructor, _CONVERT_YAML12, src, used)
            outcome.add(node, src, value)
    except (Refused, DuplicateKey) as exc:
        outcome.error, outcome.error_line, outcome.final = str(exc), exc.line, True
    except RecursionError:
        outcome.error = _TOO_DEEP
    except Exception as exc:  # any rejection: the caller then keeps libyaml's verdict
        outcome.error, outcome.error_line = _describe(exc, src)
    finally:
        getattr(nodes, "close", lambda: None)()
    return outcome
