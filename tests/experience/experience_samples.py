"""Sample games, records and waits shared by the experience store and ingestion tests."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import numpy as np

from msagent.experience.records import EpisodeRecord, Provenance
from msagent.experience.schema import GameSchema
from msagent.experience.stream_keys import StreamKeys

CARTPOLE = GameSchema(name="cartpole", obs_shape=(4,), action_n=2)
PIXELS = GameSchema(name="pixels", obs_shape=(6, 5, 3), obs_dtype="uint8", action_shape=(2,))
SCHEMAS = {s.name: s for s in (CARTPOLE, PIXELS)}
DAY = 1_704_067_200.0
"""2024-01-01 00:00:00 UTC."""


def cartpole(i: int, steps: int = 7, received_at: float = DAY, client: str = "c0",
             logp: bool = True, model_version: int | None = 3, part: int = 0,
             obs_dim: int = 4) -> EpisodeRecord:
    """A discrete-action record whose numbers all depend on ``i``."""
    rng = np.random.default_rng(i)
    return EpisodeRecord(
        "cartpole", f"ep-{i}", rng.standard_normal((steps, obs_dim)).astype(np.float32),
        rng.integers(0, 2, steps), rng.standard_normal(steps).astype(np.float32),
        np.log(rng.uniform(0.1, 1.0, steps)).astype(np.float32) if logp else None,
        i % 3 == 0, i % 3 == 1, Provenance(client, received_at + i, f"v{i % 2}", model_version),
        part)


def pixels(i: int, steps: int = 3, received_at: float = DAY) -> EpisodeRecord:
    """A Box-action uint8-image record without log-probabilities or model version."""
    rng = np.random.default_rng(1000 + i)
    return EpisodeRecord(
        "pixels", f"px-{i}", rng.integers(0, 256, (steps, 6, 5, 3), dtype=np.uint8),
        rng.uniform(-1, 1, (steps, 2)).astype(np.float32), np.ones(steps, np.float32), None,
        False, True, Provenance("painter", received_at + i, "", None), part=i)


def assert_same(got: EpisodeRecord, want: EpisodeRecord) -> None:
    """Every field of two records equal, arrays by value and dtype."""
    assert (got.game, got.episode_id, got.part) == (want.game, want.episode_id, want.part)
    assert got.provenance == want.provenance
    assert (got.terminated, got.truncated) == (want.terminated, want.truncated)
    for name in ("observations", "actions", "rewards"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert (got.log_probs is None) == (want.log_probs is None)
    if want.log_probs is not None:
        np.testing.assert_array_equal(got.log_probs, want.log_probs)


def new_keys() -> StreamKeys:
    """Stream keys no other test uses."""
    return StreamKeys(f"test:{uuid.uuid4().hex[:12]}")


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``check`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)
