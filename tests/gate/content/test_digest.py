"""Document digests: canonical JSON of the parsed document, deterministic for every value the
parser can give, and computed once per object when a file's facts are extracted."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from bot.gate.content.digest import _pieces, canonical_json, document_digest
from bot.gate.content.facts import extract_facts
from bot.yaml.documents import parse_yaml


def spec(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def only_value(text: str) -> object:
    (doc,) = parse_yaml(text.encode()).documents
    return doc.value


def test_the_digest_is_sha256_of_the_canonical_json() -> None:
    value = {"b": [1, 2.5, None, True], "a": {"z": "é", "y": "x"}}
    assert canonical_json(value) == '{"a":{"y":"x","z":"é"},"b":[1,2.5,null,true]}'
    assert document_digest(value) == hashlib.sha256(spec(value).encode()).hexdigest()


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1, "b": [{"c": None}, [], {}], "d": "\u2603", "e": -0.5, "f": 10**30},
        {"k": 'with "quotes" and \\ and \n newline', "u": "\u0000\u001f"},
        [1, [2, [3, {"x": [4]}]]],
        {"nan": math.nan, "inf": math.inf, "-inf": -math.inf},
        {3: "three", 1: "one", 2: "two"},  # one key type: sorted as json sorts them
        {True: 1, False: 0},
        {None: 2},
        "plain",
        None,
    ],
)
def test_the_fallback_writes_what_json_writes(value: object) -> None:
    assert "".join(_pieces(value)) == spec(value)


def test_timestamps_and_binary_are_the_text_as_written() -> None:
    value = only_value(
        "when: 2001-12-14t21:59:43.10-05:00\nblob: !!binary aGVsbG8=\nday: 2002-12-14\n"
    )
    assert value == {
        "when": "2001-12-14t21:59:43.10-05:00",
        "blob": "aGVsbG8=",
        "day": "2002-12-14",
    }
    assert document_digest(value) == document_digest(
        {"when": "2001-12-14t21:59:43.10-05:00", "blob": "aGVsbG8=", "day": "2002-12-14"}
    )


def test_keys_of_mixed_types_sort_by_their_json_text_and_stay_apart() -> None:
    value = only_value('1: int\n"1": str\nnull: none\nb: x\n')
    assert canonical_json(value) == '{"1":"str","1":"int","b":"x","null":"none"}'
    swapped = only_value('1: str\n"1": int\nnull: none\nb: x\n')
    assert document_digest(value) != document_digest(swapped)


def test_a_lone_surrogate_has_a_digest() -> None:
    value = only_value('a: "\\ud800"\n')
    assert value == {"a": "\ud800"}
    assert len(document_digest(value)) == 64


def test_nesting_deeper_than_the_interpreter_recurses_is_encoded() -> None:
    deep: object = "leaf"
    for _ in range(5000):
        deep = {"a": [deep]}
    text = canonical_json(deep)
    assert text.startswith('{"a":[{"a":[') and text.endswith('"leaf"' + "]}" * 5000)
    assert document_digest(deep) == document_digest(deep)


def test_aliases_are_expanded_like_the_values_they_name() -> None:
    shared = only_value("a: &x {k: [1, 2]}\nb: *x\n")
    written = only_value("a: {k: [1, 2]}\nb: {k: [1, 2]}\n")
    assert document_digest(shared) == document_digest(written)


OBJECT = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  namespace: prod
data:
  mode: prod
  size: "3"
"""


def test_each_object_of_a_file_carries_its_documents_digest() -> None:
    text = f"{OBJECT}---\n# a comment\n{OBJECT.replace('web', 'api')}"
    facts = extract_facts(text.encode(), digests=True)
    first, second = (obj for _, obj in facts.objects)
    assert first.digest == document_digest(only_value(OBJECT))
    assert second.digest != first.digest


def test_the_digest_ignores_layout_but_not_content() -> None:
    reordered = (
        "# comment\nkind: ConfigMap\napiVersion: v1\n"
        "metadata: {namespace: prod, name: web}\ndata: {size: '3', mode: prod}\n"
    )
    changed = OBJECT.replace("mode: prod", "mode: staging")

    def digest(text: str) -> str:
        ((_, obj),) = extract_facts(text.encode(), digests=True).objects
        return obj.digest

    assert digest(reordered) == digest(OBJECT)
    assert digest(changed) != digest(OBJECT)
    assert digest(OBJECT.replace('"3"', "3")) != digest(OBJECT)  # a number is not its text
