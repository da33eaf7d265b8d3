"""Stored episodes played back as fragments: steps in order across episode ends, flags where
records end, values from the given function, bootstrap from the stream's next observation."""

from __future__ import annotations

import numpy as np
import pytest

from msagent.errors import ConfigError
from msagent.experience.fragments import EpisodePlayback
from msagent.experience.records import EpisodeRecord, Provenance
from msagent.vocabulary import ModelKey

KEY = ModelKey("main", 3)


def record(name: str, length: int, start: float, terminated: bool,
           logp: bool = True) -> EpisodeRecord:
    """A record whose observation t is [start + t, 0] and reward t is start + t."""
    steps = start + np.arange(length, dtype=np.float32)
    return EpisodeRecord("g", name, np.stack([steps, np.zeros(length, np.float32)], 1),
                         np.arange(length) % 2, steps.copy(),
                         np.full(length, -0.5, np.float32) if logp else None, terminated,
                         not terminated, Provenance("c", 0.0))


def first_value(obs: np.ndarray) -> np.ndarray:
    """A 'value function' that reads the observation's first number."""
    return obs[:, 0] * 10


def test_a_stream_plays_episodes_back_to_back_with_flags_at_their_ends():
    rec = record("a", 5, 100.0, terminated=True)
    playback = EpisodePlayback(streams=1, fragment_len=4, seed=0, need_log_probs=True)
    first, second = (playback.fragments([rec], first_value, KEY)[0] for _ in range(2))
    assert first.rewards.tolist() == [100, 101, 102, 103]
    assert second.rewards.tolist() == [104, 100, 101, 102]  # the only record, drawn again
    assert second.terminated.tolist() == [True, False, False, False]
    assert not second.truncated.any() and not first.terminated.any()
    assert first.values.tolist() == [1000, 1010, 1020, 1030]
    assert first.bootstrap_value == 1040  # the next observation of the stream
    assert first.policy == KEY and first.logp.tolist() == [-0.5] * 4


def test_a_record_that_did_not_terminate_is_cut_as_truncated_with_its_last_value():
    rec = record("b", 3, 7.0, terminated=False)
    fragment = EpisodePlayback(1, 3, 0, True).fragments([rec], first_value, KEY)[0]
    assert fragment.truncated.tolist() == [False, False, True]
    assert fragment.final_values.tolist() == [0, 0, 90]
    assert not fragment.terminated.any()


def test_streams_draw_different_records_and_every_fragment_has_the_full_length():
    records = [record(str(i), 2 + i, 1000.0 * i, terminated=True) for i in range(6)]
    playback = EpisodePlayback(streams=8, fragment_len=7, seed=1, need_log_probs=True)
    fragments = [f for _ in range(5) for f in playback.fragments(records, first_value, KEY)]
    assert all(len(f) == 7 for f in fragments)
    starts = {int(f.rewards[0] // 1000) for f in fragments}
    assert len(starts) >= 4


def test_vtrace_refuses_records_without_log_probs_and_cloning_takes_them():
    rec = record("c", 4, 0.0, terminated=True, logp=False)
    with pytest.raises(ConfigError, match="log_probs"):
        EpisodePlayback(1, 4, 0, need_log_probs=True).fragments([rec], first_value, KEY)
    fragment = EpisodePlayback(1, 4, 0, need_log_probs=False).fragments([rec], first_value, KEY)[0]
    assert fragment.logp.tolist() == [0, 0, 0, 0]


def test_a_pool_plays_each_record_at_most_max_uses_times_and_keeps_the_newest_window():
    from msagent.experience.fragments import RecordPool

    records = [record(str(i), 4, float(i), terminated=True) for i in range(6)]
    for i, r in enumerate(records):
        r.provenance = type(r.provenance)("c", float(i))
    pool = RecordPool(window=4, max_uses=1)
    pool.add(records)
    assert len(pool) == 4 and pool.steps_available() == 16  # the 4 newest
    rng = np.random.default_rng(0)
    drawn = {pool.draw(rng).episode_id for _ in range(4)}
    assert drawn == {"2", "3", "4", "5"} and len(pool) == 0
    pool.add(records)  # a later read of the store brings nothing used back
    assert len(pool) == 0
    assert pool.draw(rng).episode_id in drawn  # used up: an overshooting draw reuses one


def test_a_playback_from_a_pool_uses_each_step_once_while_steps_suffice():
    from msagent.experience.fragments import RecordPool

    records = [record(str(i), 8, 100.0 * i, terminated=True) for i in range(8)]
    pool = RecordPool(window=100, max_uses=1)
    pool.add(records)
    playback = EpisodePlayback(streams=2, fragment_len=8, seed=0, need_log_probs=True)
    seen = []
    while pool.steps_available() >= 16:
        seen += [f.rewards for f in playback.fragments(pool, first_value, KEY)]
    steps = np.concatenate(seen)
    assert len(steps) == 64 and len(set(steps.tolist())) == 64
