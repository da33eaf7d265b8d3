"""The inference server (SEED-RL style) and its typed client."""

from __future__ import annotations

from msagent.services.inference.server import (InferenceClient, InferenceServer, configured,
                                               mean_batch_size, pull_weights)

__all__ = ["InferenceClient", "InferenceServer", "configured", "mean_batch_size", "pull_weights"]
