"""The ingestion consumer: records from the gateway's Redis stream into the experience store.

Each consumer of the ``ingest`` group reads new entries (``XREADGROUP``) and, first and then
every half ``claim_idle_ms``, takes over entries a dead consumer left pending longer than that
(``XAUTOCLAIM``). Every entry is decoded and checked against its game's schema again (the
values of a whole read in one scan per game); refused ones go to the dead-letter stream with
the reason and the entry id (counted with ``XLEN``, never dropped silently). Good records
are buffered until ``batch`` of them or ``flush_s`` seconds, written to the store, and only
then acknowledged and deleted from the stream. A consumer killed at any moment therefore
loses nothing: what it had not acknowledged is claimed by the next one (a record it had
written already is stored twice and read once).

One record can never stop the consumer: any error its check or value scan raises (a bug, not
only a refusal) dead-letters it with the error as the reason, and a store write failing
other than retryably is tried again record by record, the records the store refuses
dead-lettered and the rest stored. (Otherwise the entry would crash every consumer that
claims it, every ``claim_idle_ms``, forever.)
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field

import redis

from msagent.credentials import expand, redact
from msagent.experience.records import EpisodeRecord, RecordError
from msagent.experience.schema import GameSchema
from msagent.experience.store import ExperienceStore
from msagent.experience.stream_entry import checked_record
from msagent.experience.stream_keys import (CONSUMER_GROUP, ENTRY_FIELD, REASON_FIELD,
                                            RECORD_FIELD, StreamKeys)

log = logging.getLogger(__name__)

BLOCK_MS = 500
"""Longest one XREADGROUP waits for new entries (a stop request waits at most this long)."""

READ_COUNT = 250
"""Most entries one XREADGROUP asks for: Redis answers one command at a time, so a read of
thousands of episodes (tens of MB) would hold up the gateway's uploads for tens of ms."""

BACKOFF_S = (0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
"""Waits between retries after Redis or the store failed, the last one repeated."""

STOP_RETRIES = 3
"""Tries of the last flush once stopping (what fails stays pending in Redis for the next)."""

RETRYABLE = (redis.ConnectionError, redis.TimeoutError, OSError)
"""Failures a consumer waits out: Redis unreachable or loading, the store's filesystem down."""

Entry = tuple[bytes, dict[bytes, bytes] | None]
"""A stream entry: its id and fields (None: deleted since it was delivered)."""


@dataclass
class IngestStats:
    """What a consumer did so far."""

    stored: int = 0
    refused: int = 0
    started: float = field(default_factory=time.monotonic)


class Ingestor:
    """One consumer of the ingest group.

    Args:
        redis_url: The gateway's Redis (``${VAR}``/``${file:...}`` placeholders expanded).
        keys: Its key names (``[gateway] prefix``).
        store: Where records are written.
        schemas: Every accepted game's schema by name.
        batch: Most records per store write.
        flush_s: Longest a record waits in the buffer.
        claim_idle_ms: Pending entries idle this long belong to a dead consumer.
        consumer: This consumer's name in the group (default: host, pid and a random tag).
        progress_s: Seconds between progress log lines.
    """

    def __init__(self, redis_url: str, keys: StreamKeys, store: ExperienceStore,
                 schemas: dict[str, GameSchema], batch: int, flush_s: float,
                 claim_idle_ms: int, consumer: str | None = None,
                 progress_s: float = 10.0) -> None:
        self.redis = redis.Redis.from_url(expand(redis_url), socket_connect_timeout=5.0,
                                          socket_timeout=BLOCK_MS / 1000 + 30.0)
        self.where = redact(redis_url)
        self.keys, self.store, self.schemas = keys, store, schemas
        self.batch, self.flush_s, self.claim_idle_ms = batch, flush_s, claim_idle_ms
        self.consumer = consumer or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.progress_s, self.stats = progress_s, IngestStats()
        self._buffer: dict[bytes, tuple[EpisodeRecord, bytes]] = {}  # with the entry's bytes
        self._written: list[bytes] = []  # in the store, not yet acknowledged
        self._first_at: float | None = None
        self._group_ready, self._claim_from, self._next_claim = False, b"0-0", 0.0
        self._next_report = time.monotonic() + progress_s

    def run(self, stop: threading.Event | None = None) -> None:
        """Ingest until ``stop`` is set; then write and acknowledge what is buffered."""
        stop = stop or threading.Event()
        if self.flush_s * 1000 >= self.claim_idle_ms:
            log.warning("ingest: flush_s %.1f s is not below claim_idle_ms %d ms; buffered "
                        "entries may be claimed again (stored twice, read once)",
                        self.flush_s, self.claim_idle_ms)
        failures = 0
        while not stop.is_set():
            try:
                self._step()
                failures = 0
            except RETRYABLE as exc:
                stop.wait(self._retry_wait(exc, failures))
                failures += 1
        self._last_flush()

    def _step(self) -> None:
        """Claim abandoned entries when due, read new ones, flush when due, report."""
        if not self._group_ready:
            self._create_group()
        if time.monotonic() >= self._next_claim and len(self._buffer) < self.batch:
            self._claim()
        if len(self._buffer) < self.batch and not self._flush_due():
            self._read_new()
        if self._flush_due():
            self._flush()
        self._report()

    def _create_group(self) -> None:
        """The consumer group, from the stream's first entry (an existing one is kept)."""
        try:
            self.redis.xgroup_create(self.keys.stream, CONSUMER_GROUP, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._group_ready = True

    def _claim(self) -> None:
        """Take over entries pending on any consumer for longer than ``claim_idle_ms``."""
        reply = self.redis.xautoclaim(self.keys.stream, CONSUMER_GROUP, self.consumer,
                                      self.claim_idle_ms, start_id=self._claim_from,
                                      count=self.batch - len(self._buffer))
        self._claim_from, entries = reply[0], reply[1]
        if self._claim_from in (b"0-0", "0-0"):  # went through the whole list: wait a while
            self._next_claim = time.monotonic() + self.claim_idle_ms / 2000
        fresh = [(i, f) for i, f in entries if i not in self._buffer and i not in self._written]
        if fresh:
            log.info("ingest: claimed %d entries a dead consumer left pending", len(fresh))
        self._accept(fresh)

    def _read_new(self) -> None:
        """Entries never delivered to any consumer (waits up to BLOCK_MS, less if a flush
        is due sooner)."""
        block = BLOCK_MS
        if self._first_at is not None:
            due_in = self._first_at + self.flush_s - time.monotonic()
            block = max(1, min(block, int(due_in * 1000)))
        reply = self.redis.xreadgroup(CONSUMER_GROUP, self.consumer, {self.keys.stream: ">"},
                                      count=min(READ_COUNT, self.batch - len(self._buffer)),
                                      block=block)
        for _stream, entries in reply or []:
            self._accept(entries)

    def _accept(self, entries: list[Entry]) -> None:
        """Buffer the good records; dead-letter the others; acknowledge deleted entries."""
        refused: list[tuple[bytes, bytes | None, str]] = []
        gone: list[bytes] = []
        checked: list[tuple[bytes, dict[bytes, bytes], EpisodeRecord]] = []
        for entry_id, fields in entries:
            if fields is None:
                gone.append(entry_id)
                continue
            record = self._check(fields)
            if isinstance(record, str):
                refused.append((entry_id, fields.get(RECORD_FIELD), record))
            else:
                checked.append((entry_id, fields, record))
        bad_values = self._value_errors([record for _, _, record in checked])
        for i, (entry_id, fields, record) in enumerate(checked):
            if i in bad_values:
                refused.append((entry_id, fields.get(RECORD_FIELD), bad_values[i]))
            else:
                self._buffer[entry_id] = (record, fields[RECORD_FIELD])
                self._first_at = self._first_at or time.monotonic()
        if refused:
            self._dead_letter(refused)
        if gone:
            self._acknowledge(gone)

    def _check(self, fields: dict[bytes, bytes]) -> EpisodeRecord | str:
        """The entry's record checked against its game's schema (all but its values), or why
        it is refused."""
        data = fields.get(RECORD_FIELD)
        if data is None:
            return f"entry has no {RECORD_FIELD.decode()!r} field"
        try:
            return checked_record(data, self.schemas, scan_values=False)
        except RecordError as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - a bug must not stop the consumer
            return _unexpected(exc, "checking")

    def _value_errors(self, records: list[EpisodeRecord]) -> dict[int, str]:
        """Why records fail their game's value scan, by index: one scan per game of a read
        (scanning each record alone cost about a sixth of the consumer's CPU)."""
        by_game: dict[str, list[int]] = {}
        for i, record in enumerate(records):
            by_game.setdefault(record.game, []).append(i)
        errors = {}
        for game, indices in by_game.items():
            try:
                found = self.schemas[game].value_errors([records[i] for i in indices])
            except Exception as exc:  # noqa: BLE001 - find the record(s) it came from
                log.error("ingest: the value scan of %d %s records failed (%s: %s); scanning "
                          "them one by one", len(indices), game, type(exc).__name__, exc)
                found = {j: reason for j, i in enumerate(indices)
                         if (reason := self._one_value_error(records[i])) is not None}
            errors.update({indices[j]: f"game {game!r}: {reason}" for j, reason in found.items()})
        return errors

    def _one_value_error(self, record: EpisodeRecord) -> str | None:
        """Why one record fails its game's value scan (an unexpected error included)."""
        try:
            return self.schemas[record.game].value_errors([record]).get(0)
        except Exception as exc:  # noqa: BLE001 - a bug must not stop the consumer
            return _unexpected(exc, "scanning the values of")

    def _dead_letter(self, refused: list[tuple[bytes, bytes | None, str]]) -> None:
        """Move refused entries to the dead-letter stream, atomically with their removal."""
        pipe = self.redis.pipeline(transaction=True)
        for entry_id, data, reason in refused:
            fields = {REASON_FIELD: reason.encode(), ENTRY_FIELD: entry_id}
            if data is not None:
                fields[RECORD_FIELD] = data
            pipe.xadd(self.keys.dead, fields)
        ids = [entry_id for entry_id, _, _ in refused]
        pipe.xack(self.keys.stream, CONSUMER_GROUP, *ids).xdel(self.keys.stream, *ids)
        pipe.execute()
        self.stats.refused += len(refused)
        for entry_id, _, reason in refused[:3]:
            log.warning("ingest: refused entry %s: %s", entry_id.decode(), reason)

    def _flush_due(self) -> bool:
        """Whether the buffer is full or its oldest record waited ``flush_s``."""
        if self._written or len(self._buffer) >= self.batch:
            return True
        return self._first_at is not None and time.monotonic() - self._first_at >= self.flush_s

    def _flush(self) -> None:
        """Write the buffer to the store; then acknowledge and delete its entries."""
        if self._buffer:
            try:
                self.store.write([record for record, _ in self._buffer.values()])
            except RETRYABLE:
                raise
            except Exception as exc:  # noqa: BLE001 - find the records the store refuses
                log.error("ingest: the store refused a file of %d records (%s: %s); writing "
                          "them one by one", len(self._buffer), type(exc).__name__, exc)
                self._write_one_by_one()
            else:
                self._stored(list(self._buffer))
        if self._written:
            self._acknowledge(self._written)
            self._written = []

    def _write_one_by_one(self) -> None:
        """Write each buffered record alone; dead-letter each the store refuses (not
        retryably), at once, so that a retry after a retryable failure repeats nothing."""
        for entry_id, (record, data) in list(self._buffer.items()):
            try:
                self.store.write([record])
            except RETRYABLE:
                raise
            except Exception as exc:  # noqa: BLE001 - this record, not the consumer
                self._dead_letter([(entry_id, data, _unexpected(exc, "storing"))])
                del self._buffer[entry_id]
                continue
            self._stored([entry_id])
        self._first_at = None

    def _stored(self, ids: list[bytes]) -> None:
        """Move written entries from the buffer to those to acknowledge."""
        for entry_id in ids:
            del self._buffer[entry_id]
        self.stats.stored += len(ids)
        self._written.extend(ids)
        if not self._buffer:
            self._first_at = None

    def _acknowledge(self, ids: list[bytes]) -> None:
        """Acknowledge entries and delete them from the stream (one transaction)."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.xack(self.keys.stream, CONSUMER_GROUP, *ids).xdel(self.keys.stream, *ids)
        pipe.execute()

    def _last_flush(self) -> None:
        """Flush once stopping, retrying a little; what still fails stays pending in Redis."""
        for attempt in range(STOP_RETRIES):
            try:
                self._flush()
                break
            except RETRYABLE as exc:
                if attempt + 1 < STOP_RETRIES:
                    time.sleep(self._retry_wait(exc, attempt))
        else:
            log.error("ingest: stopped with %d records unwritten and %d unacknowledged; they "
                      "stay pending in Redis and the next consumer claims them",
                      len(self._buffer), len(self._written))
        log.info("ingest: stopped after storing %d records (%d refused)",
                 self.stats.stored, self.stats.refused)

    def _retry_wait(self, exc: Exception, failures: int) -> float:
        """Log a failure and say how long to wait before the next try."""
        wait = BACKOFF_S[min(failures, len(BACKOFF_S) - 1)]
        what = (f"Redis at {self.where}" if isinstance(exc, redis.RedisError)
                else f"the experience store {self.store.uri}")
        log.warning("ingest: %s failed (%s: %s); retrying in %.1f s (%d records buffered, "
                    "still pending in Redis)", what, type(exc).__name__, exc, wait,
                    len(self._buffer) + len(self._written))
        self._group_ready = False
        return wait

    def _report(self) -> None:
        """A progress line every ``progress_s``: records stored per second, refusals, lag."""
        now = time.monotonic()
        if now < self._next_report:
            return
        self._next_report = now + self.progress_s
        rate = self.stats.stored / max(now - self.stats.started, 1e-9)
        log.info("ingest: %d records stored (%.1f/s), %d refused, lag %d entries in %s",
                 self.stats.stored, rate, self.stats.refused, self.redis.xlen(self.keys.stream),
                 self.keys.stream)


def _unexpected(exc: Exception, doing: str) -> str:
    """The dead-letter reason of an error no check foresaw, logged once with its traceback
    (a bug to report, not a bad upload)."""
    reason = f"unexpected error: {type(exc).__name__}: {exc}"[:1000]
    log.error("ingest: %s while %s an entry; it goes to the dead-letter stream", reason, doing,
              exc_info=exc)
    return reason
