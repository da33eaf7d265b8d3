"""What the policy tests share: fragments acted by a policy on given observations."""

from __future__ import annotations

import numpy as np

from msagent.policy import Policy
from msagent.vocabulary import Fragment, ModelKey


def acted_fragment(policy: Policy, obs: np.ndarray, seed: int = 0) -> Fragment:
    """A fragment acted by ``policy`` on ``obs`` (``[T, ...]``), with random rewards."""
    t_len = len(obs)
    out = policy.act(obs)
    rng = np.random.default_rng(seed)
    return Fragment(
        obs=obs, actions=out.actions, logp=out.logp, values=out.values,
        rewards=rng.standard_normal(t_len).astype(np.float32),
        terminated=np.zeros(t_len, bool), truncated=np.zeros(t_len, bool),
        final_values=np.zeros(t_len, np.float32), bootstrap_value=0.0,
        policy=ModelKey("main", 0),
    )
