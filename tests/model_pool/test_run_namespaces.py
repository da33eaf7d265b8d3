"""Two runs sharing one Redis model pool keep their own keys; a resumed run keeps its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from msagent.rundir import RunDir
from msagent.services.model_pool import ModelPoolService
from msagent.vocabulary import ModelKey


def weights(value: float) -> dict[str, np.ndarray]:
    """A one-tensor weight dict."""
    return {"w": np.full(3, value, np.float32)}


def test_two_runs_on_one_redis_do_not_share_versions_or_pruning(redis_url: str,
                                                                tmp_path: Path) -> None:
    first, second = RunDir.create(tmp_path, "same"), RunDir.create(tmp_path, "same")
    assert first.run_id != second.run_id
    pool_a = ModelPoolService(redis_url, keep_last=2, namespace=first.run_id)
    pool_b = ModelPoolService(redis_url, keep_last=2, namespace=second.run_id)
    keys_a = [pool_a.push("main", weights(i)) for i in range(3)]
    assert keys_a == [ModelKey("main", v) for v in (1, 2, 3)]
    # the second run starts its own versions, and its pruning leaves the first run alone
    keys_b = [pool_b.push("main", weights(10 + i)) for i in range(4)]
    assert keys_b == [ModelKey("main", v) for v in (1, 2, 3, 4)]
    assert pool_a.list("main") == [ModelKey("main", 2), ModelKey("main", 3)]
    assert pool_b.list("main") == [ModelKey("main", 3), ModelKey("main", 4)]
    assert float(pool_a.pull(ModelKey("main", 3)).weights["w"][0]) == 2.0

    # a resumed run reads its id back from the run directory: same namespace, versions go on
    resumed = ModelPoolService(redis_url, keep_last=2, namespace=RunDir.open(first.path).run_id)
    assert resumed.push("main", weights(5.0)) == ModelKey("main", 4)
    assert resumed.push("main", weights(6.0), at_least=40) == ModelKey("main", 40)
    assert resumed.push("main", weights(7.0)) == ModelKey("main", 41)
