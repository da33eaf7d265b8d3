"""The store reader: feeds the learner fragments played back from the experience store that
game clients fill (``msagent serve``), as an env worker feeds it its own games.

It follows the learner's parameters to record values with the current policy (V-trace and
cloning correct for the policy that acted), ships ``streams`` fragments per round into the
replay buffer, and in sync mode waits for the next parameter version, like an env worker; it
answers ``drain`` like one too, so the driver and the supervisor treat both alike.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from msagent.experience.fragments import EpisodePlayback, RecordPool, check_actions_fit
from msagent.runtime import current_instance, register
from msagent.services.env_worker import worker_seed
from msagent.services.looping import Looping
from msagent.services.params import PolicyFollower
from msagent.services.replay_buffer import BufferClient
from msagent.user_scripts import build_policy
from msagent.vocabulary import ModelKey, PolicyScripts

log = logging.getLogger("msagent.store_reader")
IDLE_S = 0.5
"""How long a reader sleeps while the store has fewer records than it needs."""


@dataclass
class ReaderSettings:
    """What a store reader needs: the user's scripts (the policy's shape), the store, and
    how it ships fragments (see ``[data]`` in the config reference)."""

    scripts: PolicyScripts
    store: str
    game: str
    fragment_len: int
    streams: int = 8
    window: int = 10_000
    refresh_s: float = 5.0
    min_records: int = 1
    max_uses: int = 1
    newest_first: bool = True
    policy_id: str = "main"
    table: str = "fragments"
    sync: bool = True
    need_log_probs: bool = True
    generation: int = 0


class StoreReader(Looping):
    """Plays stored episodes back as fragments for the learner."""

    def __init__(self, settings: ReaderSettings) -> None:
        from msagent.experience.store import ExperienceStore

        super().__init__()
        self.s = settings
        self.index = current_instance()[1]
        sc = settings.scripts
        self.follower = PolicyFollower(build_policy(sc.env_script, sc.agent_script,
                                                    sc.env_params, sc.seed), settings.policy_id)
        seed = worker_seed(sc.seed, self.index, settings.generation)
        self.playback = EpisodePlayback(settings.streams, settings.fragment_len, seed,
                                        settings.need_log_probs)
        self.store = ExperienceStore(settings.store)
        self.pool = RecordPool(settings.window, settings.max_uses, settings.newest_first)
        self._seen_until, self._next_refresh, self._records_seen = 0.0, 0.0, 0
        self._steps, self._first_step = 0, None

    @register(concurrent=True)
    def drain(self) -> dict[str, Any]:
        """Steps shipped since the last drain (no episodes: stored returns are the clients')."""
        with self._lock:
            out = {"episodes": [], "env_steps": self._steps, "error": self.error,
                   "version": self.follower.version, "first_step_time": self._first_step,
                   "records": len(self.pool)}
            self._steps = 0
        return out

    def _loop(self) -> None:
        """Wait for parameters and records; then ship rounds of fragments."""
        self.follower.wait_for(1, self._stop)
        while not self._stop.is_set():
            self._refresh()
            if not self._ready():
                time.sleep(IDLE_S)
                continue
            self._ship()

    def _ready(self) -> bool:
        """Enough records seen, and enough steps left to fill a round without reusing any."""
        s = self.s
        return (self._records_seen >= s.min_records and
                self.pool.steps_available() >= s.streams * s.fragment_len)

    def _ship(self) -> None:
        """One round: fragments valued by the current policy, into the buffer; then (sync)
        wait for the version trained on them."""
        version = self.follower.version
        fragments = self.playback.fragments(self.pool, self._values,
                                             ModelKey(self.s.policy_id, version))
        BufferClient.insert(self.s.table, fragments)
        with self._lock:
            self._first_step = self._first_step or time.time()
            self._steps += sum(len(f) for f in fragments)
        if self.s.sync:
            self.follower.wait_for(version + 1, self._stop)
        else:
            self.follower.refresh()

    def _refresh(self) -> None:
        """Add records stored since the last look (the pool keeps the newest ``window``)."""
        if time.monotonic() < self._next_refresh:
            return
        self._next_refresh = time.monotonic() + self.s.refresh_s
        since = self._seen_until - 1.0 if self._seen_until else None  # clocks of writers differ
        records = self.store.episodes(self.s.game, since=since)
        check_actions_fit(records, self.follower.policy.action_spec, self.s.game)
        before = len(self.pool)
        self.pool.add(records)
        self._records_seen += max(0, len(self.pool) - before)
        if records:
            self._seen_until = max([self._seen_until, *(r.provenance.received_at
                                                         for r in records)])
        if since is not None:
            self.pool.forget_before(since)  # older records are never read again

    def _values(self, obs: np.ndarray) -> np.ndarray:
        """The current policy's values of observations."""
        return self.follower.policy.act(obs).values
