"""Parameter averaging: the element-wise mean of weight sets, and its clear refusals."""

from __future__ import annotations

import numpy as np
import pytest

from msagent.errors import ConfigError
from msagent.policy.averaging import mean_weights


def test_the_mean_is_element_wise_and_keeps_each_dtype() -> None:
    a = {"w": np.array([1.0, 2.0], np.float32), "n": np.array([1, 3], np.int64)}
    b = {"w": np.array([3.0, 6.0], np.float32), "n": np.array([3, 5], np.int64)}
    out = mean_weights([a, b])
    np.testing.assert_array_equal(out["w"], [2.0, 4.0])
    np.testing.assert_array_equal(out["n"], [2, 4])
    assert out["w"].dtype == np.float32 and out["n"].dtype == np.int64


def test_one_set_is_its_own_mean() -> None:
    a = {"w": np.arange(6, dtype=np.float32).reshape(2, 3)}
    np.testing.assert_array_equal(mean_weights([a])["w"], a["w"])


def test_sets_of_other_networks_are_refused_naming_the_tensor() -> None:
    a = {"w": np.zeros(2, np.float32)}
    with pytest.raises(ConfigError, match=r"set 1 differs from set 0 in tensors \['v', 'w'\]"):
        mean_weights([a, {"v": np.zeros(2, np.float32)}])
    with pytest.raises(ConfigError, match=r"set 1: 'w' has shape \(3,\), set 0 has \(2,\)"):
        mean_weights([a, {"w": np.zeros(3, np.float32)}])
    with pytest.raises(ConfigError, match="at least one"):
        mean_weights([])
