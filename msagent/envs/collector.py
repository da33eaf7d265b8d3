"""Steps K environments with one batched act per step and cuts the result into Fragments.

Used by the env worker service and by the in-process reference benchmark alike. Truncation
final values cost no extra forward pass: the final observations of truncated envs are
appended to the next step's act batch. What the envs return is checked against their declared
observation space (:class:`msagent.envs.checks.ObsChecker`, one vectorized check per step).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from msagent.envs.checks import ObsChecker
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
    """Acts in K vectorized envs for T steps at a time and returns K Fragments.

    Args:
        envs: the vector env (``make_vector_env``: same-step autoreset with ``final_obs``).
        act: batched acting function.
        length: T, steps per fragment.
        seed: seed of the first reset.
        checker: checks observations and rewards; default: an ``ObsChecker`` built from
            ``envs.single_observation_space``.
        checks: False disables the checks (``checker`` is then ignored).
        env_label: names this group of envs in error messages, e.g. ``"worker EnvWorker#0"``.

    Raises:
        EnvDataError: an env returned an observation outside its space or a non-finite value.
    """

    def __init__(self, envs: gym.vector.VectorEnv, act: ActFn, length: int, seed: int, *,
                 checker: ObsChecker | None = None, checks: bool = True,
                 env_label: str = "") -> None:
        """Reset the envs and act once, so every later step starts from a ready action."""
        self.envs, self.act, self.length = envs, act, length
        self.checker = (checker or _default_checker(envs, env_label)) if checks else None
        self.env_step = 0
        self.obs = self._reset(seed)
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
        self.obs, rewards, terminated, truncated, info = self._env_step(actions)
        cols["rewards"][:, t], cols["terminated"][:, t] = rewards, terminated
        cols["truncated"][:, t] = truncated
        cut = np.flatnonzero(truncated & ~terminated)
        batch = self.obs if len(cut) == 0 else self._with_final_obs(info["final_obs"], cut)
        self.pending = self.act(batch)
        cols["final_values"][cut, t] = self.pending.out.values[k:]
        self._track_episodes(rewards, terminated | truncated)
        return key

    def _fragment(self, cols: dict[str, np.ndarray], i: int, key: ModelKey) -> Fragment:
        """Env ``i``'s rows of the column buffers as a Fragment."""
        return Fragment(**{name: column[i] for name, column in cols.items()},
                        bootstrap_value=float(self.pending.out.values[i]), policy=key)

    def _reset(self, seed: int) -> np.ndarray:
        """Reset all envs and check the first observations (step 0)."""
        try:
            obs, _ = self.envs.reset(seed=seed)
        except (TypeError, ValueError) as exc:
            self._explain(exc)
            raise
        if self.checker is not None:
            self.checker.check_obs(obs, self.env_step)
        return obs

    def _env_step(self, actions: np.ndarray) -> tuple[Any, ...]:
        """Step all envs and check the observations and rewards (one vectorized check each)."""
        self.env_step += 1
        try:
            result = self.envs.step(actions)
        except (TypeError, ValueError) as exc:
            self._explain(exc)
            raise
        if self.checker is not None:
            self.checker.check_obs(result[0], self.env_step)
            self.checker.check_rewards(result[1], self.env_step)
        return result

    def _explain(self, exc: Exception) -> None:
        """Raise EnvDataError instead of ``exc`` when an env's own observation broke stacking.

        Reads the per-env observations gymnasium's ``SyncVectorEnv`` keeps; with other vector
        envs (or when every observation fits) ``exc`` stands.
        """
        if self.checker is not None:
            error = self.checker.explain(getattr(self.envs, "_env_obs", None), self.env_step)
            if error is not None:
                raise error from exc

    def _with_final_obs(self, final_obs: np.ndarray, cut: np.ndarray) -> np.ndarray:
        """The observations with the checked final observations of envs ``cut`` stacked under."""
        rows = [np.asarray(final_obs[i]) for i in cut]
        if self.checker is not None:
            for i, row in zip(cut, rows, strict=True):
                self.checker.check_obs(row[None], self.env_step, env_ids=[int(i)],
                                       what="final observation")
        return np.concatenate([self.obs, np.stack(rows).astype(self.obs.dtype, copy=False)])

    def _track_episodes(self, rewards: np.ndarray, done: np.ndarray) -> None:
        """Accumulate episode returns and lengths; log the episodes that just ended."""
        self.returns += rewards
        self.lengths += 1
        for i in np.flatnonzero(done):
            self.episodes.append((float(self.returns[i]), int(self.lengths[i])))
            self.returns[i], self.lengths[i] = 0.0, 0


def _default_checker(envs: gym.vector.VectorEnv, env_label: str) -> ObsChecker:
    """An ObsChecker for the envs' declared single observation space (rewards only without)."""
    space = getattr(envs, "single_observation_space", None)
    return ObsChecker(space, env_label, num_envs=envs.num_envs)


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
