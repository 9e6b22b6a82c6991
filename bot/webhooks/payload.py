"""Typed reads from an untrusted JSON body; every failure is a ``WebhookError`` naming the field.

A delivery is verified before it is parsed, but a signed body can still be malformed (a forge
bug, a hand-made test delivery, a leaked secret), so nothing here indexes blindly: each read
checks the type and reports the dotted path of what is missing or wrong, never the value.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import orjson

from bot.errors import IchorError
from bot.repos.names import RepositoryCheck, clone_url_problem, is_http_url, ref_problem

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_BAD_NAME = re.compile(r"[\x00-\x20\x7f]")


class WebhookError(IchorError):
    """A delivery the web app answers with 400: not JSON, or without what its event needs."""


def parse_json(body: bytes) -> JsonObject:
    """The body as a JSON object; anything else (not JSON, not an object) is a WebhookError."""
    try:
        # orjson: several times faster on the hot path, and it refuses NaN/Infinity, integers
        # past 64 bits and nesting past 1,024 levels by itself.
        data = orjson.loads(body)
    except json.JSONDecodeError as exc:  # orjson's error is a subclass
        raise WebhookError(f"body is not JSON ({exc.msg} at line {exc.lineno})") from None
    except (ValueError, RecursionError):
        # Undecodable bytes, NaN/Infinity, integers past the digit limit, absurd nesting.
        raise WebhookError("body is not JSON") from None
    if not isinstance(data, dict):
        raise WebhookError(f"body is a JSON {_json_type(data)}, not an object")
    return JsonObject(data)


def forge_time(text: str) -> datetime | None:
    """A forge's timestamp as an aware UTC datetime; None for a zero value (Gitea's
    ``0001-01-01T00:00:00Z``). ISO 8601 with ``Z`` or an offset, with or without fractions, and
    GitLab's older ``2015-05-17 18:08:09 UTC``; ValueError for anything else, or no zone."""
    value = text.strip()
    if len(value) > 40:
        raise ValueError("not a timestamp")
    if value.endswith(" UTC"):
        value = value[: -len(" UTC")] + "+00:00"
    elif value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError("a timestamp without a time zone")
    if moment.year <= 1:
        return None
    return moment.astimezone(UTC)


def is_zero_sha(sha: str) -> bool:
    """The all-zero object id forges use for "no commit" (a created or deleted ref)."""
    return sha.strip("0") == ""


class JsonObject:
    """One JSON object and the dotted path that reached it, for error messages."""

    __slots__ = ("_data", "_path")

    def __init__(self, data: dict[str, Any], path: str = "") -> None:
        self._data = data
        self._path = path

    def has(self, key: str) -> bool:
        """Present and not null."""
        return self._data.get(key) is not None

    def peek(self, key: str) -> object:
        """The raw value or None, for lenient looks that never fail (ignored events)."""
        return self._data.get(key)

    def peek_text(self, key: str) -> str | None:
        value = self._data.get(key)
        return value if isinstance(value, str) else None

    def obj(self, key: str) -> JsonObject:
        return self._object(key, self._need(key))

    def opt_obj(self, key: str) -> JsonObject | None:
        value = self._data.get(key)
        return None if value is None else self._object(key, value)

    def objs(self, key: str) -> tuple[JsonObject, ...]:
        """A list of objects; absent or null is empty."""
        value = self._data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self._wrong(key, "a list", value)
        items = []
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                raise self._wrong(f"{key}[{index}]", "an object", item)
            items.append(JsonObject(item, self._at(f"{key}[{index}]")))
        return tuple(items)

    def text(self, key: str) -> str:
        value = self._need(key)
        if not isinstance(value, str):
            raise self._wrong(key, "a string", value)
        return value

    def opt_text(self, key: str) -> str | None:
        return None if self._data.get(key) is None else self.text(key)

    def name(self, key: str) -> str:
        """A login or ``owner/name``: non-empty, no whitespace or control characters."""
        value = self.text(key)
        if not value or _BAD_NAME.search(value):
            raise WebhookError(f"field {self._at(key)}: not a valid name")
        return value

    def opt_name(self, key: str) -> str | None:
        return None if self._data.get(key) is None else self.name(key)

    def repository(self, key: str, check: RepositoryCheck) -> str:
        """A repository's full name, by the forge's own rules (``check``)."""
        value = self.name(key)
        problem = check(value)
        if problem is not None:
            raise WebhookError(f"field {self._at(key)}: {problem}")
        return value

    def opt_repository(self, key: str, check: RepositoryCheck) -> str | None:
        return None if self._data.get(key) is None else self.repository(key, check)

    def web_url(self, key: str, full_name: str) -> str:
        """The repository's page; an http(s) one must name ``full_name`` (it can be cloned)."""
        value = self.text(key)
        if is_http_url(value) and clone_url_problem(value, full_name) is not None:
            raise WebhookError(f"field {self._at(key)}: names another repository than {full_name}")
        return value

    def clone_url(self, key: str, full_name: str) -> str | None:
        """The http(s) clone URL, if any, refused when it names another repository."""
        value = self.peek_text(key)
        if value is None or not is_http_url(value):
            return None  # SSH and junk: never fetched from
        if clone_url_problem(value, full_name) is not None:
            raise WebhookError(f"field {self._at(key)}: names another repository than {full_name}")
        return value

    def number(self, key: str) -> int:
        """A positive integer: a pull request number, an installation or check run id."""
        value = self._need(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._wrong(key, "an integer", value)
        if value < 1:
            raise WebhookError(f"field {self._at(key)}: expected a positive integer")
        return value

    def opt_number(self, key: str) -> int | None:
        return None if self._data.get(key) is None else self.number(key)

    def ident(self, key: str) -> str:
        """An id forges send as a number or a string, kept as a string."""
        value = self._need(key)
        if isinstance(value, bool) or not isinstance(value, int | str) or value == "":
            raise self._wrong(key, "an id", value)
        return str(value)

    def opt_ident(self, key: str) -> str | None:
        return None if self._data.get(key) is None else self.ident(key)

    def flag(self, key: str) -> bool:
        """A boolean; absent or null is False."""
        value = self._data.get(key)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self._wrong(key, "a boolean", value)
        return value

    def sha(self, key: str) -> str:
        """A full commit id (SHA-1 or SHA-256), lower-cased."""
        value = self.text(key).lower()
        if not _SHA.fullmatch(value):
            raise WebhookError(f"field {self._at(key)}: not a commit SHA")
        return value

    def opt_sha(self, key: str) -> str | None:
        """Absent, null or empty (Gitea sends "" for "none") is None."""
        return None if self._data.get(key) in (None, "") else self.sha(key)

    def opt_time(self, key: str) -> str | None:
        """A timestamp as ISO 8601 in UTC (``2026-12-04T20:00:00.123000+00:00``); None when
        absent, null, a zero value (Gitea's ``0001-01-01T00:00:00Z``) or not a timestamp, so a
        consumer that needs it refuses with a reason rather than the delivery being lost."""
        value = self._data.get(key)
        if not isinstance(value, str):
            return None
        try:
            moment = forge_time(value)
        except ValueError:
            return None
        return None if moment is None else moment.isoformat()

    def ref(self, key: str) -> str:
        """A branch or full ref name, refused when git would refuse it too."""
        value = self.text(key)
        problem = ref_problem(value)
        if problem is not None:
            raise WebhookError(f"field {self._at(key)}: {problem}")
        return value

    def _need(self, key: str) -> object:
        value = self._data.get(key)
        if value is None:
            raise WebhookError(f"missing field {self._at(key)}")
        return value

    def _object(self, key: str, value: object) -> JsonObject:
        if not isinstance(value, dict):
            raise self._wrong(key, "an object", value)
        return JsonObject(value, self._at(key))

    def _at(self, key: str) -> str:
        return f"{self._path}.{key}" if self._path else key

    def _wrong(self, key: str, expected: str, value: object) -> WebhookError:
        return WebhookError(f"field {self._at(key)}: expected {expected}, got {_json_type(value)}")


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "list" if isinstance(value, list) else "object"
