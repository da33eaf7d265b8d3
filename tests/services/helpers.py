"""What the service tests share: the CartPole example's scripts, real fragments, polling."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from msagent.buffer import TableConfig
from msagent.envs import policy_act, solo_collector
from msagent.policy import Policy
from msagent.user_scripts import build_policy, env_factory
from msagent.vocabulary import Fragment, ModelKey, PolicyScripts

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "cartpole"
SCRIPTS = PolicyScripts(str(EXAMPLES / "cartpole_env.py"), str(EXAMPLES / "cartpole_agent.py"),
                        {"id": "CartPole-v1"}, seed=0)
TABLE = "fragments"


def fifo_table(max_size: int = 1024) -> TableConfig:
    """An on-policy FIFO table as the training wiring builds it (each item sampled once)."""
    return TableConfig(name=TABLE, max_size=max_size, sampler="fifo", remover="fifo",
                       max_times_sampled=1)


def cartpole_policy(seed: int) -> Policy:
    """The example's CartPole policy, its initial weights fixed by ``seed``."""
    return build_policy(SCRIPTS.env_script, SCRIPTS.agent_script, SCRIPTS.env_params, seed)


def cartpole_fragments(key: ModelKey, num_envs: int = 4, length: int = 16,
                       seed: int = 0) -> list[Fragment]:
    """One round of real CartPole fragments acted by a fresh policy and labelled ``key``."""
    policy = cartpole_policy(seed)
    collector = solo_collector(env_factory(SCRIPTS.env_script, SCRIPTS.env_params), num_envs,
                               policy_act(policy, key), length, seed)
    try:
        return collector.collect()
    finally:
        for slot in collector.slots:
            slot.env.close()


def cartpole_obs(rows: int, seed: int = 0) -> np.ndarray:
    """``rows`` CartPole-like observations (float32, inside the usual state ranges)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-0.2, 0.2, size=(rows, 4)).astype(np.float32)


def wait_until(predicate: Callable[[], Any], timeout_s: float = 20.0,
               what: str = "condition") -> Any:
    """Poll ``predicate`` until it returns something truthy; fail naming ``what`` on timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
