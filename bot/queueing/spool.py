"""A bounded local spool: verified deliveries the queue could not take, kept until it can.

One file per delivery, written to a temporary name, fsync'd, then renamed (and the directory
fsync'd), so a delivery answered 202 survives a crash. Names sort by arrival, so draining
keeps order; the queue's own dedupe makes a drain that is interrupted and repeated harmless.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from bot.queueing.base import DeliveryQueue, Outcome, QueuedDelivery, QueueUnavailableError

DRAIN_BATCH = 200


class Spool:
    def __init__(self, directory: Path, max_files: int) -> None:
        self.directory = directory
        self.max_files = max_files
        self._lock = threading.Lock()
        self._seq = 0
        directory.mkdir(parents=True, exist_ok=True)

    def files(self) -> list[Path]:
        return sorted(p for p in self.directory.iterdir() if p.suffix == ".json")

    def __len__(self) -> int:
        return len(self.files())

    def put(self, delivery: QueuedDelivery) -> bool:
        """Keep one delivery; False when the spool is full."""
        with self._lock:
            if len(self) >= self.max_files:
                return False
            self._seq += 1
            name = f"{time.time_ns():020d}-{self._seq:06d}-{delivery.job_id}.json"
        path = self.directory / name
        tmp = self.directory / f".{name}.tmp"
        data = json.dumps(delivery.to_dict()).encode()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        tmp.replace(path)
        dir_fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return True

    def drain(self, queue: DeliveryQueue) -> int:
        """Move spooled deliveries into ``queue`` in arrival order; returns how many moved."""
        moved = 0
        with self._lock:
            files = self.files()
            for start in range(0, len(files), DRAIN_BATCH):
                batch = files[start : start + DRAIN_BATCH]
                deliveries = [QueuedDelivery.from_dict(json.loads(p.read_bytes())) for p in batch]
                try:
                    queue.submit_many(deliveries)
                except QueueUnavailableError:
                    return moved
                for path in batch:
                    path.unlink(missing_ok=True)
                moved += len(batch)
        return moved


def spool_or_refuse(spool: Spool, deliveries: list[QueuedDelivery]) -> list[Outcome]:
    return [Outcome.SPOOLED if spool.put(d) else Outcome.UNAVAILABLE for d in deliveries]
