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

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from msagent.errors import ConfigError
from msagent.experience.records import EpisodeRecord
from msagent.vocabulary import Fragment, ModelKey

if TYPE_CHECKING:
    from msagent.policy.spaces import ActionSpec

ValueFn = Callable[[np.ndarray], np.ndarray]
"""Observations ``[N, ...]`` -> the current policy's values ``[N]``."""


class RecordPool:
    """The newest stored records a reader draws episodes from, each at most ``max_uses``
    times (0: without limit); a record used up leaves the pool.

    Drawing each record once (``max_uses = 1``) keeps the learner as close to the clients'
    newest models as the data allows: it waits for new uploads instead of replaying old ones,
    whose actors fall further behind with every update.
    """

    def __init__(self, window: int, max_uses: int, newest_first: bool = False) -> None:
        self.window, self.max_uses, self.newest_first = window, max_uses, newest_first
        self._records: dict[tuple[str, str, int], EpisodeRecord] = {}
        self._uses: dict[tuple[str, str, int], int] = {}
        self._done: dict[tuple[str, str, int], float] = {}
        self._spent: deque[EpisodeRecord] = deque(maxlen=64)

    def add(self, records: list[EpisodeRecord]) -> None:
        """Take records not seen before; keep the newest ``window``."""
        for record in records:
            key = _key(record)
            if key not in self._done and key not in self._records:
                self._records[key], self._uses[key] = record, 0  # in order of arrival
        if len(self._records) > self.window:
            newest = sorted(self._records, key=lambda k: self._records[k].provenance.received_at)
            for key in newest[:-self.window]:
                self._drop(key, spent=False)

    def forget_before(self, received_at: float) -> None:
        """Forget used-up records received before this time (they are never offered again),
        so that a reader running for days keeps a bounded memory."""
        self._done = {k: t for k, t in self._done.items() if t >= received_at}

    def steps_available(self) -> int:
        """Steps the pool can still play back (``max_uses = 0``: its steps once)."""
        if not self.max_uses:
            return sum(len(r) for r in self._records.values())
        return sum(len(r) * (self.max_uses - self._uses[k]) for k, r in self._records.items())

    def __len__(self) -> int:
        """Records in the pool."""
        return len(self._records)

    def draw(self, rng: np.random.Generator) -> EpisodeRecord:
        """A record drawn uniformly (or the newest, with ``newest_first``: the freshest data
        when clients upload faster than the learner trains); counted as used. When every
        record is used up (a reader checks ``steps_available`` first, so only a fragment's
        last draw can find it so), one of the last used-up records is drawn again."""
        keys = list(self._records)
        if not keys:
            if not self._spent:
                raise LookupError("the record pool is empty")
            return self._spent[int(rng.integers(len(self._spent)))]
        key = keys[-1] if self.newest_first else keys[int(rng.integers(len(keys)))]
        record = self._records[key]
        self._uses[key] += 1
        if self.max_uses and self._uses[key] >= self.max_uses:
            self._drop(key)
        return record

    def _drop(self, key: tuple[str, str, int], spent: bool = True) -> None:
        """Remove a record for good (a later read of the store does not bring it back)."""
        record = self._records.pop(key)
        del self._uses[key]
        self._done[key] = record.provenance.received_at
        if spent:
            self._spent.append(record)


def _key(record: EpisodeRecord) -> tuple[str, str, int]:
    """What identifies a stored record: (client, episode id, part)."""
    return record.provenance.client_id, record.episode_id, record.part


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

    def fragments(self, records: RecordPool | list[EpisodeRecord], values: ValueFn,
                  key: ModelKey) -> list[Fragment]:
        """One fragment per stream, episodes drawn uniformly from ``records`` (a pool, or a
        list drawn from without limit); a pool must hold enough steps
        (``steps_available() >= streams * fragment_len``)."""
        if not isinstance(records, RecordPool):
            pool = RecordPool(len(records) or 1, 0)
            pool.add(records)
            records = pool
        if not len(records):
            raise ValueError("no stored records to play back")
        while len(self._cursors) < self.streams:
            self._cursors.append(_Cursor(self._draw(records)))
        steps = [self._take(cursor, records) for cursor in self._cursors]
        return [self._fragment(parts, values, key) for parts in steps]

    def _draw(self, records: RecordPool) -> EpisodeRecord:
        """A record drawn uniformly, checked for what the algorithm needs."""
        record = records.draw(self.rng)
        if self.need_log_probs and record.log_probs is None:
            raise ConfigError(f"record {record.episode_id!r} of client "
                              f"{record.provenance.client_id!r} has no log_probs: V-trace "
                              "needs the behaviour's log-probabilities (use [algorithm] "
                              "name = 'bc', or have clients upload log_probs)")
        return record

    def _take(self, cursor: _Cursor, records: RecordPool) -> list[tuple]:
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
        if cursor.step >= len(cursor.record):  # the fragment ends with the record: its
            return parts + [cursor.record.observations[-1]]  # bootstrap value is never used
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


def check_actions_fit(records: list[EpisodeRecord], spec: ActionSpec, game: str) -> None:
    """Refuse stored actions that the learner's policy does not act in (its env script's
    action space is not the game's), before the algorithm meets them as a shape error.

    The store gives every record of a game one layout, so the first one's kind stands for
    all; integer actions are also checked against the policy's number of choices.

    Raises:
        ConfigError: naming both action spaces.
    """
    if not records:
        return
    stored, wanted = _stored_space(records[0]), _policy_space(spec)
    fits = stored == _policy_space(spec, sized=False)
    if fits and not spec.continuous:
        high = np.max([r.actions.max(axis=0) for r in records], axis=0)
        if np.any(high >= np.asarray(spec.nvec or spec.size)):
            fits, stored = False, f"{stored} up to {high.tolist()}"
    if not fits:
        raise ConfigError(f"the experience store's game {game!r} holds actions in {stored}, but "
                          f"the policy of the env script acts in {wanted}: the env script "
                          f"(scripts.env) must give the game's action space")


def _stored_space(record: EpisodeRecord) -> str:
    """A stored record's action space in words (a Discrete one's size is not stored)."""
    if record.action_nvec is not None:
        return f"MultiDiscrete({list(record.action_nvec)})"
    if record.actions.ndim == 1 and record.actions.dtype.kind in "iub":
        return "Discrete"
    return f"Box({list(record.actions.shape[1:])})"


def _policy_space(spec: ActionSpec, sized: bool = True) -> str:
    """A policy's action space in the words of :func:`_stored_space` (``sized=False``: a
    Discrete one without its size, as a store gives it)."""
    if spec.nvec is not None:
        return f"MultiDiscrete({list(spec.nvec)})"
    if spec.continuous:
        return f"Box({[spec.size]})"
    return f"Discrete({spec.size})" if sized else "Discrete"


def _logp(record: EpisodeRecord) -> np.ndarray:
    """The record's behaviour log-probabilities (zeros when it has none: cloning ignores them)."""
    if record.log_probs is None:
        return np.zeros(len(record), np.float32)
    return record.log_probs.astype(np.float32, copy=False)
