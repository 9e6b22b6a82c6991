"""The spool on a real directory: the bound, batches, and nothing half-written left behind."""

from __future__ import annotations

import json
from pathlib import Path

from bot.queueing.base import QueuedDelivery
from bot.queueing.spool import PUT_BATCH, Spool


def delivery(n: int) -> QueuedDelivery:
    return QueuedDelivery("github", f"d{n}", "push", {"type": "push", "n": n})


def test_a_batch_is_kept_up_to_the_bound_in_order(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool", max_files=PUT_BATCH + 3)
    kept = spool.put_many([delivery(n) for n in range(PUT_BATCH + 5)])
    assert kept == [True] * (PUT_BATCH + 3) + [False, False]
    files = spool.files()
    assert [json.loads(p.read_bytes())["event"]["n"] for p in files] == list(range(PUT_BATCH + 3))
    assert not [p for p in (tmp_path / "spool").iterdir() if p.name.startswith(".")]
    assert not spool.put(delivery(99))


def test_the_bound_counts_what_an_earlier_run_left(tmp_path: Path) -> None:
    assert Spool(tmp_path / "spool", max_files=2).put_many([delivery(1), delivery(2)]) == [
        True,
        True,
    ]
    assert Spool(tmp_path / "spool", max_files=2).put(delivery(3)) is False
