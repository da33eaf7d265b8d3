"""End to end on images: a CNN learns a game that only the newest stacked frame can win.

The spot game (``image_task/spot_env.py``) rewards pressing the quadrant a square is in, with
earlier squares in the older frames of the stack. A policy that ignores the screen, reads the
wrong frame, or is trained on observations shifted by a step against its actions scores 8 of
32 per episode; the test asks for 28.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msagent.config import load_config
from msagent.rundir import RunDir
from msagent.train import run_training

TASK = Path(__file__).resolve().parent / "image_task"

CONFIG = """
[run]
name = "spot"
seed = 0
mode = "local"
[run.stop]
mean_return = 28.0
return_window = 32
time_s = 240
[scripts]
env = "spot_env.py"
agent = "spot_agent.py"
[services.env_worker]
num = 1
num_envs = 8
fragment_len = 32
[services.learner]
sync = true
max_policy_lag = 0
[services.buffer]
max_size = 256
sampler = "fifo"
remover = "fifo"
max_times_sampled = 1
[algorithm]
lr = 0.001
epochs = 4
minibatches = 4
ent_coef = 0.01
clip = 0.2
"""


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["local", "ray"])
def test_a_cnn_learns_to_read_the_newest_frame_of_the_stack(mode: str, tmp_path: Path,
                                                           request: pytest.FixtureRequest) -> None:
    if mode == "ray":
        request.getfixturevalue("ray_only")  # the session's Ray, not one started for this test
    toml = tmp_path / "spot.toml"
    toml.write_text(CONFIG.replace('"spot_', f'"{TASK}/spot_'))
    cfg = load_config(toml, [f"run.root={json.dumps(str(tmp_path))}", "logging.progress=false",
                             "logging.tensorboard=false",
                             f"run.mode={json.dumps(mode)}"])
    result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name), False)
    assert result["stop_reason"].startswith("mean_return"), result
    assert result["mean_return"] >= 28.0
