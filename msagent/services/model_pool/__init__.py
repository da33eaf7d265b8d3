"""The model pool as a service and its typed client."""

from __future__ import annotations

from msagent.services.model_pool.service import ModelPoolService, PoolClient

__all__ = ["ModelPoolService", "PoolClient"]
