"""Is a document really SOPS-encrypted? A ``sops`` key alone proves nothing.

A document counts as encrypted when its ``sops`` envelope is one SOPS writes and can read back
(getsops/sops ``stores/stores.go``): a ``mac`` (itself an encrypted value), a ``lastmodified``
time, at least one key that holds the encrypted data key (``age``, ``pgp``, ``kms``,
``gcp_kms``, ``azure_kv``, ``hc_vault``, ``hckms``, or ``key_groups`` of them), and at most one
of the six encryption rules; and when every value under ``data`` and ``stringData`` that the
rule selects is an ``ENC[AES256_GCM,data:...,iv:...,tag:...,type:...]`` value. SOPS leaves
empty strings and nulls as they are, and the values its rule does not select in clear; but a
document whose values are all clear is plain text whatever its envelope says.

The rule is applied as SOPS does (``sops.go`` ``shouldBeEncrypted``): a value is encrypted
unless a key on its path ends with ``unencrypted_suffix`` (``_unencrypted`` when no rule is
named) or matches ``unencrypted_regex``; with ``encrypted_suffix`` or ``encrypted_regex`` only
when a key on its path does. Regexes are Go's, matched in linear time by
:mod:`bot.gate.content.goregex` within a budget; the comment rules need the file's comments,
which are not read. When the rule cannot be applied to a clear value, the gate cannot tell it
from a leak and says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from bot.gate.content.goregex import Budget, Program, Unsupported, compile_pattern, search
from bot.yaml.parsed import LinePath

KEY_SOURCES = ("age", "pgp", "kms", "gcp_kms", "azure_kv", "hc_vault", "hckms")
RULES = (
    "unencrypted_suffix",
    "encrypted_suffix",
    "unencrypted_regex",
    "encrypted_regex",
    "unencrypted_comment_regex",
    "encrypted_comment_regex",
)
SECTIONS = ("data", "stringData")
DEFAULT_UNENCRYPTED_SUFFIX = "_unencrypted"
_ENC_PREFIX = "ENC[AES256_GCM,data:"
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)")
_MAX_KEY = 253  # a longer key is no valid data key; past it the rule is not applied
_BUDGET = 2_000_000  # automaton states all of one document's searches may visit


def is_encrypted_value(value: object) -> bool:
    """An ``ENC[AES256_GCM,data:...,iv:...,tag:...,type:...]`` value, as SOPS parses it."""
    if not isinstance(value, str) or not value.startswith(_ENC_PREFIX) or value[-1] != "]":
        return False
    at = len(_ENC_PREFIX)
    for part in (",iv:", ",tag:", ",type:"):
        at = value.find(part, at + 1)
        if at < 0:
            return False
    return True


def sops_problem(
    doc: Mapping[str, object], lines: Mapping[LinePath, int], line: int
) -> tuple[int, str] | None:
    """Why a document with a ``sops`` mapping does not count as encrypted, at which line."""
    envelope = doc["sops"]
    assert isinstance(envelope, Mapping)
    why = _envelope_problem(envelope)
    if why is not None:
        return lines.get(("sops",), line), f"its sops envelope {why}"
    return _values_problem(doc, envelope, lines, line)


def _envelope_problem(envelope: Mapping[object, object]) -> str | None:
    if not is_encrypted_value(envelope.get("mac")):
        return "has no mac, the encrypted MAC SOPS writes over the values"
    modified = envelope.get("lastmodified")
    if not isinstance(modified, str) or _RFC3339.fullmatch(modified[:64]) is None:
        return "has no lastmodified time (RFC 3339), which SOPS writes and reads back"
    if not _has_data_key(envelope):
        sources = ", ".join((*KEY_SOURCES, "key_groups"))
        return f"holds no encrypted data key (an entry with enc under {sources})"
    named = [rule for rule in RULES if envelope.get(rule) not in (None, "")]
    if len(named) > 1:
        return f"names {' and '.join(named)}: SOPS reads at most one encryption rule"
    if named and not isinstance(envelope[named[0]], str):
        return f"has a {named[0]} that is not text"
    return None


def _has_data_key(envelope: Mapping[object, object]) -> bool:
    """SOPS takes the top-level key lists as one group, else ``key_groups``."""
    groups: list[object] = [envelope]
    if not any(isinstance(envelope.get(s), list) and envelope.get(s) for s in KEY_SOURCES):
        key_groups = envelope.get("key_groups")
        groups = key_groups if isinstance(key_groups, list) else []
    for group in groups:
        if not isinstance(group, Mapping):
            continue
        for source in KEY_SOURCES:
            keys = group.get(source)
            for key in keys if isinstance(keys, list) else ():
                enc = key.get("enc") if isinstance(key, Mapping) else None
                if isinstance(enc, str) and enc.strip():
                    return True
    return False


def _leaves(doc: Mapping[str, object]) -> Iterator[tuple[tuple[str, ...], object]]:
    """Every value under data and stringData with the keys on its path (SOPS's path: list
    items add no key). Iterative: a hostile document may nest deep."""
    stack: list[tuple[tuple[str, ...], object]] = [
        ((section,), doc[section]) for section in reversed(SECTIONS) if section in doc
    ]
    while stack:
        path, value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend(((*path, str(k)), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((path, v) for v in reversed(value))
        else:
            yield path, value


class _Rule:
    """The envelope's encryption rule, applied to the keys of a value's path."""

    def __init__(self, envelope: Mapping[object, object]) -> None:
        named = next((r for r in RULES if envelope.get(r) not in (None, "")), None)
        self.name = named or "unencrypted_suffix"
        self.value = str(envelope[named]) if named else DEFAULT_UNENCRYPTED_SUFFIX
        self.shown = f"{self.name} {self.value!r}" + ("" if named else " (the default)")
        self._program: Program | None = None
        self._budget = Budget(_BUDGET)
        self._matched: dict[str, bool] = {}

    def encrypts(self, path: tuple[str, ...]) -> bool:
        """Whether SOPS encrypts a value with this path; Unsupported when it cannot be told."""
        if self.name.endswith("comment_regex"):
            raise Unsupported("it depends on the file's comments, which are not read")
        hit = any(self._hit(key) for key in path)
        return hit if self.name.startswith("encrypted") else not hit

    def _hit(self, key: str) -> bool:
        if self.name.endswith("suffix"):
            return key.endswith(self.value)
        found = self._matched.get(key)
        if found is None:
            if len(key) > _MAX_KEY:
                raise Unsupported(f"a key of {len(key)} characters")
            if self._program is None:
                self._program = compile_pattern(self.value)
            found = self._matched[key] = search(self._program, key, self._budget)
        return found


def _values_problem(
    doc: Mapping[str, object],
    envelope: Mapping[object, object],
    lines: Mapping[LinePath, int],
    line: int,
) -> tuple[int, str] | None:
    rule = _Rule(envelope)
    encrypted = 0
    first_clear: tuple[str, ...] | None = None
    for path, value in _leaves(doc):
        if value is None or value == "":
            continue  # SOPS leaves these as they are
        if is_encrypted_value(value):
            encrypted += 1
            continue
        shown = ".".join(path)
        where = lines.get(path[:2], lines.get(path[:1], line))
        try:
            selected = rule.encrypts(path)
        except Unsupported as exc:
            return where, (
                f"{shown} is plain text, and the envelope's {rule.shown} cannot be applied here "
                f"({exc}) to tell whether SOPS left it so"
            )
        if selected:
            return where, (
                f"{shown} is plain text, yet the envelope's {rule.shown} has SOPS encrypt it"
            )
        first_clear = first_clear or path
    if first_clear is not None and encrypted == 0:
        where = lines.get(first_clear[:2], line)
        return where, (
            f"no value under data or stringData is encrypted: the envelope's {rule.shown} "
            "leaves them all in plain text"
        )
    return None
