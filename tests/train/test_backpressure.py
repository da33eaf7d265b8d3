"""Back-pressure on async env workers: they wait before shipping to a table that holds a few of
its learner's batches, instead of acting data that the learner would only drop as stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from msagent.config.services import LearnerSection
from msagent.train import run_training
from msagent.train.run_services import queue_room
from tests.train.test_multi_seat_single_policy import TICTACTOE, config


@pytest.mark.parametrize(("settings", "room"), [
    ({"sync": True}, 0),  # sync workers wait for versions instead
    ({"sync": False, "max_policy_lag": 3}, 2 * 16),
    ({"sync": False, "max_policy_lag": 0}, 16),
    ({"sync": False, "max_policy_lag": 3, "queued_batches": 5}, 5 * 16),
    ({"sync": False, "max_policy_lag": 3, "queued_batches": 0}, 0)])
def test_the_room_is_a_few_batches_below_the_allowed_lag(settings: dict, room: int) -> None:
    assert queue_room(LearnerSection(**settings), 16) == room


@pytest.mark.slow
def test_async_workers_wait_for_a_slower_learner(tmp_path: Path) -> None:
    """IMPALA on tic-tac-toe, 10 k env steps on one process: 61 updates of 16 fragments and 4
    dropped; without the wait (queued_batches = 0) the actors took the learner's CPU: 11
    updates, 667 fragments dropped (at 20 k steps: 106-110 and 250-290; 15-17 and 1,500-1,700)."""
    result = run_training(config(tmp_path, TICTACTOE, "run.stop.env_steps=10000",
                                 "services.learner.sync=false", 'algorithm.name="impala"'),
                          None, False)
    assert result["stop_reason"].startswith("env_steps"), result
    used = result["updates"] * 2 * 4 * 2
    assert result["updates"] >= 25 and result["dropped_fragments"] <= 0.25 * used, result
