"""Typed service clients: every cross-service call goes through one, named by the method
itself, so no service or method name is a string literal outside ``runtime/``."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import numpy as np
import pytest

from msagent.buffer import TableConfig
from msagent.runtime import call, launch
from msagent.services.model_pool import ModelPoolService, PoolClient
from msagent.services.replay_buffer import BufferClient, ReplayBufferService

PACKAGE = Path(__file__).resolve().parents[2] / "msagent"
SERVICES = {"ReplayBufferService", "ModelPoolService", "InferenceServer", "LeagueService",
            "Evaluator", "Learner", "EnvWorker", "MetaEvaluator", "StoreReader"}
"""The service classes other code calls."""


def test_no_service_is_addressed_by_a_string_outside_the_runtime() -> None:
    found = []
    for path in PACKAGE.rglob("*.py"):
        if "runtime" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            named = [a for a in [*node.args, *(k.value for k in node.keywords)]
                     if isinstance(a, ast.Constant) and a.value in SERVICES]
            if named or (isinstance(node.func, ast.Attribute)
                         and node.func.attr in ("retrieve", "retrieve_async")):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not found, "address services through their typed clients:\n" + "\n".join(found)


METHOD_ARG = {"call_all": 0, "call_each": 0, "call_some": 1, "call": 0}
"""Calls that name a service method, and where the method is among their arguments."""


def test_no_service_method_is_named_by_a_string_outside_the_runtime() -> None:
    found = []
    for path in PACKAGE.rglob("*.py"):
        if "runtime" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            where = (METHOD_ARG.get(node.func.attr) if isinstance(node, ast.Call)
                     and isinstance(node.func, ast.Attribute) else None)
            if where is not None and len(node.args) > where and \
                    isinstance(node.args[where], ast.Constant) and \
                    isinstance(node.args[where].value, str):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} "
                             f"{node.func.attr}({node.args[where].value!r})")
    assert not found, ("pass the method itself (Learner.stats, a Protocol's for a handle of "
                       "several classes), not its name:\n" + "\n".join(found))


def test_typed_clients_reach_the_live_service(backend: str) -> None:
    launch(ReplayBufferService, args=([TableConfig("t", max_size=10)],))
    launch(ModelPoolService)
    assert len(BufferClient.insert_wait("t", [1, 2, 3], 1.0)) == 3
    assert BufferClient.size("t") == 3
    BufferClient.insert("t", [4])  # fire and forget: it lands a moment later on Ray
    deadline = time.monotonic() + 10
    while BufferClient.size("t") < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert BufferClient.size("t") == 4
    drawn = [i.item for i in BufferClient.sample("t", 3, 1.0)]  # uniform, with replacement
    assert len(drawn) == 3 and set(drawn) <= {1, 2, 3, 4}
    assert BufferClient.await_room("t", 10, 0.1)
    key = PoolClient.push("main", {"w": np.ones(2, np.float32)}, {"updates": 1}, 5)
    assert key.version >= 5 and PoolClient.keys("main") == [key]
    assert np.array_equal(PoolClient.pull(key).weights["w"], np.ones(2, np.float32))


def test_call_names_the_service_by_the_method_s_class(backend: str) -> None:
    launch(ModelPoolService)
    assert call(ModelPoolService.list, "nobody") == []
    with pytest.raises(Exception, match="ReplayBufferService"):  # none launched: named
        call(ReplayBufferService.stats, "t")
