"""Stored episodes played back as fragments, so that the learner trains on uploads exactly as
it trains on its own env workers' experience.

``streams`` virtual environments each play stored episodes back to back (a new one drawn at
random when one ends) and are cut into fragments of ``fragment_len`` steps, as an env worker's
environments are. The behaviour log-probabilities are the uploaded ones (V-trace corrects for
the policy that acted); the values are the *current* learner policy's, computed here with the
``values`` callable, as an actor would have recorded them.

Approximation: an upload carries no observation after its last step, so a truncated episode
(or a part of one) bootstraps from the value of its last observation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from msagent.errors import ConfigError
from msagent.experience.records import EpisodeRecord
from msagent.vocabulary import Fragment, ModelKey

ValueFn = Callable[[np.ndarray], np.ndarray]
"""Observations ``[N, ...]`` -> the current policy's values ``[N]``."""


@dataclass
class _Cursor:
    """Where one virtual environment is: which record, which step."""

    record: EpisodeRecord
    step: int = 0


class EpisodePlayback:
    """Cuts randomly drawn stored episodes into fragments, ``streams`` at a time.

    Args:
        streams: Virtual environments (fragments per :meth:`fragments` call).
        fragment_len: Steps per fragment.
        seed: Seeds the draws.
        need_log_probs: Refuse records without behaviour log-probabilities (V-trace needs them).
    """

    def __init__(self, streams: int, fragment_len: int, seed: int,
                 need_log_probs: bool) -> None:
        self.streams, self.fragment_len = streams, fragment_len
        self.need_log_probs = need_log_probs
        self.rng = np.random.default_rng(seed)
        self._cursors: list[_Cursor] = []

    def fragments(self, records: list[EpisodeRecord], values: ValueFn,
                  key: ModelKey) -> list[Fragment]:
        """One fragment per stream, episodes drawn uniformly from ``records``."""
        if not records:
            raise ValueError("no stored records to play back")
        while len(self._cursors) < self.streams:
            self._cursors.append(_Cursor(self._draw(records)))
        steps = [self._take(cursor, records) for cursor in self._cursors]
        return [self._fragment(parts, values, key) for parts in steps]

    def _draw(self, records: list[EpisodeRecord]) -> EpisodeRecord:
        """A record drawn uniformly, checked for what the algorithm needs."""
        record = records[int(self.rng.integers(len(records)))]
        if self.need_log_probs and record.log_probs is None:
            raise ConfigError(f"record {record.episode_id!r} of client "
                              f"{record.provenance.client_id!r} has no log_probs: V-trace "
                              "needs the behaviour's log-probabilities (use [algorithm] "
                              "name = 'bc', or have clients upload log_probs)")
        return record

    def _take(self, cursor: _Cursor, records: list[EpisodeRecord]) -> list[tuple]:
        """``fragment_len`` steps of one stream as (record, start, stop) slices, plus the
        stream's next observation (for the bootstrap value)."""
        parts, need = [], self.fragment_len
        while need:
            if cursor.step >= len(cursor.record):
                cursor.record, cursor.step = self._draw(records), 0
            stop = min(len(cursor.record), cursor.step + need)
            parts.append((cursor.record, cursor.step, stop))
            need -= stop - cursor.step
            cursor.step = stop
        if cursor.step >= len(cursor.record):
            cursor.record, cursor.step = self._draw(records), 0
        return parts + [cursor.record.observations[cursor.step]]

    def _fragment(self, parts: list, values: ValueFn, key: ModelKey) -> Fragment:
        """Assemble one fragment from its slices; values from one batched call."""
        *slices, next_obs = parts
        obs = np.concatenate([r.observations[a:b] for r, a, b in slices])
        v = np.asarray(values(np.concatenate([obs, next_obs[None]])), np.float32)
        t_len = len(obs)
        terminated, truncated = np.zeros(t_len, bool), np.zeros(t_len, bool)
        final_values, end = np.zeros(t_len, np.float32), 0
        for record, a, b in slices:
            end += b - a
            if b == len(record):  # the record ends here: terminal, or cut (a time limit/part)
                terminated[end - 1] = record.terminated
                truncated[end - 1] = not record.terminated
                final_values[end - 1] = 0.0 if record.terminated else v[end - 1]
        return Fragment(
            obs=obs, actions=np.concatenate([r.actions[a:b] for r, a, b in slices]),
            logp=np.concatenate([_logp(r)[a:b] for r, a, b in slices]),
            values=v[:t_len], rewards=np.concatenate([r.rewards[a:b] for r, a, b in slices]),
            terminated=terminated, truncated=truncated, final_values=final_values,
            bootstrap_value=float(v[t_len]), policy=key)


def _logp(record: EpisodeRecord) -> np.ndarray:
    """The record's behaviour log-probabilities (zeros when it has none: cloning ignores them)."""
    if record.log_probs is None:
        return np.zeros(len(record), np.float32)
    return record.log_probs.astype(np.float32, copy=False)
