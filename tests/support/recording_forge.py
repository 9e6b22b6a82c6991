"""One in-memory forge for unit tests: the local forge, every adapter call recorded, and a
failure raised or a canned answer given where a test says so, by method name.

A test hands it where a :class:`bot.forges.base.ForgeAdapter` goes (it is one, in full), reads
back what was asked of it (:meth:`RecordingForge.calls_of`), and makes one method fail without
writing a forge of its own.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bot.forges.base import ForgeAdapter
from bot.forges.local import LocalForge

# Every method of the adapter protocol: each is recorded.
ADAPTER_METHODS = tuple(
    name
    for name, value in inspect.getmembers(ForgeAdapter, inspect.isfunction)
    if not name.startswith("_")
)


class RecordingForge(LocalForge):
    def __init__(
        self,
        data_dir: Path,
        *,
        failures: Mapping[str, BaseException] | None = None,
        answers: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(data_dir)
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.failures: dict[str, BaseException] = dict(failures or {})
        self.answers: dict[str, Any] = dict(answers or {})  # instead of the local forge's

    def calls_of(self, name: str) -> list[tuple[Any, ...]]:
        """The positional arguments of every call of ``name``, in order."""
        return [args for called, args, _ in self.calls if called == name]


def _recorded(name: str) -> Callable[..., Any]:
    local = getattr(LocalForge, name)

    def method(self: RecordingForge, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((name, args, kwargs))
        failure = self.failures.get(name)
        if failure is not None:
            raise failure
        if name in self.answers:
            return self.answers[name]
        return local(self, *args, **kwargs)

    method.__name__ = name
    return method


for _name in ADAPTER_METHODS:
    setattr(RecordingForge, _name, _recorded(_name))
