"""The Redis names the gateway (producer) and the ingestion consumer agree on.

One stream carries every game's records (each entry names its game); entries hold their
msgpack bytes (see :mod:`msagent.experience.stream_entry`) under field ``r``. Entries are deleted only after their Parquet file
is written and acknowledged, so the stream is never trimmed past unconsumed data.
"""

from __future__ import annotations

from dataclasses import dataclass

RECORD_FIELD = b"r"
"""Stream entry field holding an accepted upload's bytes (either form of ``stream_entry``)."""

REASON_FIELD = b"reason"
"""Dead-letter entry field saying why a record was refused."""

ENTRY_FIELD = b"entry"
"""Dead-letter entry field with the original stream entry id."""

CONSUMER_GROUP = "ingest"
"""The consumer group of ingestion consumers."""


@dataclass(frozen=True)
class StreamKeys:
    """Every key under one prefix (``[gateway] prefix``)."""

    prefix: str = "msagent:exp"

    @property
    def stream(self) -> str:
        """The stream of accepted records."""
        return f"{self.prefix}:stream"

    @property
    def dead(self) -> str:
        """The dead-letter stream: records a later check refused (counted with XLEN)."""
        return f"{self.prefix}:dead"

    def idempotency(self, game: str, client_id: str, episode_id: str, part: int) -> str:
        """Remembers one uploaded (episode, part) of one client: its stream entry id."""
        return f"{self.prefix}:idem:{game}:{client_id}:{episode_id}:{part}"
