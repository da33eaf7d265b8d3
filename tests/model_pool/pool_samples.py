"""Sample weights and a bit-exact comparison, shared by the model pool tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from msagent.model_pool import Store

StoreFactory = Callable[[], Store]
"""What the ``new_store`` fixture yields: each call gives a store onto the same snapshots."""


def sample_weights() -> dict[str, np.ndarray]:
    """Arrays of every dtype and shape the pool promises to keep exactly."""
    rng = np.random.default_rng(0)
    return {
        "fc.weight": rng.standard_normal((4, 3)).astype(np.float32),
        "half": np.array([0.1, -0.0, np.inf, np.nan, 65504.0], dtype=np.float16),
        "steps": np.array([-(2**62), 0, 2**62 + 7], dtype=np.int64),
        "mask": np.array([[True, False], [False, True]]),
        "scalar": np.array(3.25, dtype=np.float32),
        "empty": np.zeros((0, 5), dtype=np.float32),
        "double": rng.standard_normal(3),
        "bytes": np.arange(7, dtype=np.uint8),
    }


def assert_bit_exact(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    """Same names in the same order, same dtypes, shapes and bytes (NaN payloads included)."""
    assert list(got) == list(want)
    for name, array in want.items():
        assert got[name].dtype == array.dtype, name
        assert got[name].shape == array.shape, name
        assert got[name].tobytes() == np.ascontiguousarray(array).tobytes(), name
