"""scripts/bench_compare.py: a developer tool outside ``make test``; here only that it loads."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.conftest import ROOT


def test_help_works(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location(
        "bench_compare", ROOT / "scripts/bench_compare.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_compare", module)  # dataclasses look it up there
    spec.loader.exec_module(module)
    with pytest.raises(SystemExit) as exit_:
        module.main(["--help"])
    assert exit_.value.code == 0 and "--pairs" in capsys.readouterr().out
