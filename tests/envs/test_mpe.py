"""MPE (the ``mpe2`` package, PettingZoo's former ``pettingzoo.mpe``) through ``PadSeats``: the
speaker and the listener of ``simple_speaker_listener`` observe ``(3,)`` and ``(11,)`` and act
in ``Discrete(3)`` and ``Discrete(5)``; the lead adversary of ``simple_world_comm`` has 20
actions, the others 5."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from msagent.envs.adapters import as_multi_agent
from msagent.envs.wrappers import PadSeats
from msagent.errors import ScriptError
from msagent.train import run_training
from msagent.validate_env import validate_env
from tests.train.test_multi_seat_single_policy import config

mpe2 = pytest.importorskip("mpe2")

SPEAKER_LISTENER = '''
from mpe2 import simple_speaker_listener_v4

from msagent.envs.wrappers import PadSeats


def make_env(max_cycles=25):
    return PadSeats(simple_speaker_listener_v4.parallel_env(max_cycles=max_cycles))
'''


def test_mpe_seats_of_different_actions_are_refused_then_padded() -> None:
    from mpe2 import simple_speaker_listener_v4, simple_world_comm_v3

    with pytest.raises(ScriptError, match=r"speaker_0: Discrete\(3\); listener_0: "
                       r"Discrete\(5\).*PadSeats"):
        as_multi_agent(simple_speaker_listener_v4.parallel_env())
    game = PadSeats(simple_speaker_listener_v4.parallel_env())
    assert game.action_space.n == 5 and game.observation_space.shape == (11 + 2,)
    turn = game.reset(seed=0)
    assert turn.masks[0].tolist() == [True] * 3 + [False] * 2 and turn.masks[1].all()
    world = PadSeats(simple_world_comm_v3.parallel_env())
    assert world.action_space.n == 20
    masks = world.reset(seed=0).masks
    assert masks[0].all() and all(masks[s].sum() == 5 for s in range(1, 6))


def test_validate_env_passes_a_padded_mpe_game(tmp_path: Path) -> None:
    script = tmp_path / "speaker_listener_env.py"
    script.write_text(SPEAKER_LISTENER)
    report = validate_env(str(script), {}, steps=300)
    assert report.ok, report.render()
    assert report.games >= 10 and report.avg_length == 25.0


@pytest.mark.slow
def test_one_policy_learns_speaker_listener(tmp_path: Path) -> None:
    """Random play averages -42 per episode (200 games); a 2-minute run on the embedded Ray
    went on to -12 to -17. Both seats earn the same reward."""
    script = tmp_path / "speaker_listener_env.py"
    script.write_text(SPEAKER_LISTENER)
    result = run_training(config(tmp_path, script, "run.stop.mean_return=-20"), None, False)
    assert result["stop_reason"].startswith("mean_return"), result
    assert result["env_errors"] == 0 and np.isfinite(result["mean_return"]), result
