"""The experience store reader: replays stored episodes into the replay buffer."""

from __future__ import annotations

from msagent.services.store_reader.service import ReaderSettings, StoreReader

__all__ = ["ReaderSettings", "StoreReader"]
