"""Steps K environments with one batched act per step and cuts the result into Fragments.

Used by the env worker service and by the in-process reference benchmark alike. Truncation
final values cost no extra forward pass: the final observations of truncated envs are
appended to the next step's act batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from msagent.policy import ActOutput
from msagent.vocabulary import Fragment, ModelKey


class Acted(NamedTuple):
    """What an act function returns: the policy's output and the key of the policy that acted."""

    out: ActOutput
    key: ModelKey


ActFn = Callable[[np.ndarray], Acted]


def make_vector_env(make_env: Callable[[], Any], num_envs: int) -> gym.vector.VectorEnv:
    """K synchronous envs that reset in the same step and report ``final_obs``."""
    return gym.vector.SyncVectorEnv([make_env for _ in range(num_envs)],
                                    autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)


class FragmentCollector:
    """Acts in K vectorized envs for T steps at a time and returns K Fragments."""

    def __init__(self, envs: gym.vector.VectorEnv, act: ActFn, length: int, seed: int) -> None:
        """Reset the envs and act once, so every later step starts from a ready action."""
        self.envs, self.act, self.length = envs, act, length
        self.obs, _ = envs.reset(seed=seed)
        self.pending = act(self.obs)
        self.returns = np.zeros(envs.num_envs)
        self.lengths = np.zeros(envs.num_envs, np.int64)
        self.episodes: list[tuple[float, int]] = []

    def collect(self) -> list[Fragment]:
        """Act for T steps in all envs and return one Fragment per env."""
        k = self.envs.num_envs
        cols = _empty_columns(k, self.length, self.obs, self.pending.out.actions)
        key = self.pending.key
        for t in range(self.length):
            key = min(key, self._step(cols, t, k))
        return [self._fragment(cols, i, key) for i in range(k)]

    def act_again(self) -> None:
        """Re-decide the pending actions (after new parameters arrived between fragments), so
        that the next fragment is acted by one policy version from its first step."""
        self.pending = self.act(self.obs)

    def take_episodes(self) -> list[tuple[float, int]]:
        """The (return, length) of episodes finished since the last call."""
        done, self.episodes = self.episodes, []
        return done

    def _step(self, cols: dict[str, np.ndarray], t: int, k: int) -> ModelKey:
        """One vectorized step, recording what was acted and V(final obs) on truncation."""
        out, key = self.pending
        actions = out.actions[:k]
        cols["obs"][:, t], cols["actions"][:, t] = self.obs, actions
        cols["logp"][:, t], cols["values"][:, t] = out.logp[:k], out.values[:k]
        self.obs, rewards, terminated, truncated, info = self.envs.step(actions)
        cols["rewards"][:, t], cols["terminated"][:, t] = rewards, terminated
        cols["truncated"][:, t] = truncated
        cut = np.flatnonzero(truncated & ~terminated)
        batch = self.obs if len(cut) == 0 else _append_rows(self.obs, info["final_obs"][cut])
        self.pending = self.act(batch)
        cols["final_values"][cut, t] = self.pending.out.values[k:]
        self._track_episodes(rewards, terminated | truncated)
        return key

    def _fragment(self, cols: dict[str, np.ndarray], i: int, key: ModelKey) -> Fragment:
        """Env ``i``'s rows of the column buffers as a Fragment."""
        return Fragment(**{name: column[i] for name, column in cols.items()},
                        bootstrap_value=float(self.pending.out.values[i]), policy=key)

    def _track_episodes(self, rewards: np.ndarray, done: np.ndarray) -> None:
        """Accumulate episode returns and lengths; log the episodes that just ended."""
        self.returns += rewards
        self.lengths += 1
        for i in np.flatnonzero(done):
            self.episodes.append((float(self.returns[i]), int(self.lengths[i])))
            self.returns[i], self.lengths[i] = 0.0, 0


def _append_rows(obs: np.ndarray, extra: np.ndarray) -> np.ndarray:
    """Stack extra observations (an object array of rows) under the batch."""
    return np.concatenate([obs, np.stack(list(extra)).astype(obs.dtype, copy=False)])


def _empty_columns(k: int, t_len: int, obs: np.ndarray,
                   actions: np.ndarray) -> dict[str, np.ndarray]:
    """Fresh ``[K, T, ...]`` buffers for one round of fragments."""
    floats = ("logp", "values", "rewards", "final_values")
    cols = {name: np.zeros((k, t_len), np.float32) for name in floats}
    cols["obs"] = np.zeros((k, t_len, *obs.shape[1:]), obs.dtype)
    cols["actions"] = np.zeros((k, t_len, *actions.shape[1:]), actions.dtype)
    cols["terminated"] = np.zeros((k, t_len), bool)
    cols["truncated"] = np.zeros((k, t_len), bool)
    return cols
