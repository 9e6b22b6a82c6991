"""A bounded local spool: verified deliveries the queue could not take, kept until it can.

One file per delivery, written to a temporary name, fsync'd, then renamed (and the directory
fsync'd), so a delivery answered 202 survives a crash. Names sort by arrival, so draining
keeps order; the queue's own dedupe makes a drain that is interrupted and repeated harmless.

A file that cannot be read back (unreadable, not JSON, not a delivery, too large) is moved to a
sibling ``<spool>-quarantine`` folder, logged and counted, and draining goes on: one bad file
must never hold back every delivery behind it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path

from bot.queueing.base import DeliveryQueue, Outcome, QueuedDelivery, QueueUnavailableError

DRAIN_BATCH = 200
PUT_BATCH = 64
# A spooled delivery is the parsed event (a few KiB); anything this large was not written here.
MAX_FILE_BYTES = 16 << 20
log = logging.getLogger("ichor.spool")


class Spool:
    def __init__(self, directory: Path, max_files: int) -> None:
        self.directory = directory
        self.max_files = max_files
        self.quarantine = directory.with_name(directory.name + "-quarantine")
        self.quarantined = 0  # files moved aside by this process
        self._lock = threading.Lock()  # the sequence number and the bound
        self._draining = threading.Lock()  # one drain at a time; never held by put()
        self._seq = 0
        self._stuck: set[str] = set()  # bad files that could not even be moved aside
        directory.mkdir(parents=True, exist_ok=True)
        # Files held, kept in step by put and drain (and recounted by each drain), so the
        # bound costs no directory listing per delivery.
        self._count = len(self.files())

    def files(self) -> list[Path]:
        return sorted(
            p
            for p in self.directory.iterdir()
            if p.suffix == ".json" and not p.name.startswith(".") and p.name not in self._stuck
        )

    def __len__(self) -> int:
        return len(self.files())

    def put(self, delivery: QueuedDelivery) -> bool:
        """Keep one delivery; False when the spool is full or the disk refuses it."""
        return self.put_many([delivery])[0]

    def put_many(self, deliveries: list[QueuedDelivery]) -> list[bool]:
        """Keep each delivery (True) or refuse it: the spool is full, or the disk failed.

        Every file is written before any is fsync'd and the directory is fsync'd once, so a
        batch costs far less than as many single puts; each file is still durable on its own.
        """
        if len(deliveries) > PUT_BATCH:  # each file is open until all are written
            return [
                kept
                for start in range(0, len(deliveries), PUT_BATCH)
                for kept in self.put_many(deliveries[start : start + PUT_BATCH])
            ]
        with self._lock:
            room = max(0, min(len(deliveries), self.max_files - self._count))
            self._count += room
            names = []
            for delivery in deliveries[:room]:
                self._seq += 1
                names.append(f"{time.time_ns():020d}-{self._seq:06d}-{delivery.job_id}.json")
        kept = [False] * len(deliveries)
        written: list[tuple[int, str, int]] = []  # (index, name, open fd)
        try:
            for index, name in enumerate(names):
                fd = self._write(self.directory / f".{name}.tmp", deliveries[index])
                if fd is not None:
                    written.append((index, name, fd))
            for index, name, fd in written:
                try:
                    os.fsync(fd)
                    os.replace(self.directory / f".{name}.tmp", self.directory / name)
                    kept[index] = True
                except OSError as exc:
                    log.error("cannot spool %s: %s", name, exc)
        finally:
            for _, _, fd in written:
                os.close(fd)
            for _, name, _ in written:
                (self.directory / f".{name}.tmp").unlink(missing_ok=True)
        if any(kept):
            try:
                dir_fd = os.open(self.directory, os.O_RDONLY)
                try:
                    os.fsync(dir_fd)
                finally:
                    os.close(dir_fd)
            except OSError as exc:  # the files may not survive a crash: say so, refuse them
                log.error("cannot fsync the spool directory: %s", exc)
                kept = [False] * len(deliveries)  # a kept one drains later: dedupe settles it
        with self._lock:
            self._count -= room - sum(kept[:room])
        return kept

    @staticmethod
    def _write(tmp: Path, delivery: QueuedDelivery) -> int | None:
        """An open descriptor of ``tmp`` holding ``delivery``, not yet fsync'd; None on a
        failing disk (a full or failing disk refuses the delivery: 503)."""
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as exc:
            log.error("cannot spool %s: %s", tmp.name, exc)
            return None
        try:
            view = memoryview(json.dumps(delivery.to_dict()).encode())
            while view:  # a write may be short
                view = view[os.write(fd, view) :]
        except OSError as exc:
            log.error("cannot spool %s: %s", tmp.name, exc)
            os.close(fd)
            tmp.unlink(missing_ok=True)
            return None
        return fd

    def drain(self, queue: DeliveryQueue) -> int:
        """Move spooled deliveries into ``queue`` in arrival order; returns how many moved.

        Returns 0 at once when another drain is running (it will move them).
        """
        if not self._draining.acquire(blocking=False):
            return 0
        moved = 0
        try:
            files = self.files()
            with self._lock:
                self._count = len(files)
            for start in range(0, len(files), DRAIN_BATCH):
                batch: list[tuple[Path, QueuedDelivery]] = []
                for path in files[start : start + DRAIN_BATCH]:
                    delivery = self._read(path)
                    if delivery is not None:
                        batch.append((path, delivery))
                if not batch:
                    continue
                try:
                    queue.submit_many([d for _, d in batch])
                except QueueUnavailableError:
                    return moved
                for path, _ in batch:
                    path.unlink(missing_ok=True)
                moved += len(batch)
                with self._lock:
                    self._count -= len(batch)
        finally:
            self._draining.release()
        return moved

    def _read(self, path: Path) -> QueuedDelivery | None:
        """The delivery in ``path``; None when it is gone or was quarantined."""
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
            if len(data) > MAX_FILE_BYTES:
                raise ValueError(f"over {MAX_FILE_BYTES} bytes")
            raw = json.loads(data)
            if not isinstance(raw, dict) or not isinstance(raw.get("event"), dict):
                raise ValueError("not a spooled delivery")
            return QueuedDelivery.from_dict(raw)
        except FileNotFoundError:
            return None  # drained or removed meanwhile
        except (OSError, ValueError, KeyError, RecursionError) as exc:
            self._set_aside(path, exc)
            return None

    def _set_aside(self, path: Path, why: Exception) -> None:
        self.quarantined += 1
        with self._lock:
            self._count -= 1  # moved aside or ignored from now on: either way not held
        try:
            self.quarantine.mkdir(exist_ok=True)
            os.replace(path, self.quarantine / path.name)
        except OSError as exc:
            self._stuck.add(path.name)
            log.error("spool file %s is unreadable (%s) and stays: %s", path.name, why, exc)
            return
        log.error("spool file %s is unreadable (%s): moved to %s", path.name, why, self.quarantine)


def spool_or_refuse(spool: Spool, deliveries: list[QueuedDelivery]) -> list[Outcome]:
    return [Outcome.SPOOLED if kept else Outcome.UNAVAILABLE for kept in spool.put_many(deliveries)]
