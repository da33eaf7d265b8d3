"""The replay buffer as a service and its typed client."""

from __future__ import annotations

from msagent.services.replay_buffer.service import BufferClient, ReplayBufferService

__all__ = ["BufferClient", "ReplayBufferService"]
