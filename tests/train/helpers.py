"""What the training tests share: the CartPole example config, loaded quietly into tmp dirs;
a run's feed; stopping a run once what a test checks has happened."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from msagent.config import TrainConfig, load_config
from msagent.rundir import RunDir
from msagent.train import run_training
from msagent.train.resume import ResumePlan

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cartpole_ppo.toml"


def example_config(root: Path, mode: str, *overrides: str) -> TrainConfig:
    """``examples/cartpole_ppo.toml`` in ``mode`` ("local" or "ray"), writing run dirs under
    ``root``, without progress output; ``overrides`` are ``--set`` strings."""
    return load_config(EXAMPLE, [f"run.root={json.dumps(str(root))}",
                                 f"run.mode={json.dumps(mode)}", "logging.progress=false",
                                 "logging.tensorboard=false", *overrides])


SMALL_MLP_AGENT = '''from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None):
    return Policy(observation_space, action_space, NetworkConfig(hidden=(32,)), seed=seed)
'''


def one_seat_config(root: Path, env_source: str, mean_return: float) -> TrainConfig:
    """A quiet one-process PPO run of the env script ``env_source`` (one worker of 8 envs,
    32-step fragments, a 32-unit MLP) that stops at ``mean_return`` (or after 120 s)."""
    (root / "env.py").write_text(env_source)
    (root / "agent.py").write_text(SMALL_MLP_AGENT)
    toml = root / "run.toml"
    toml.write_text(f'[run]\nname = "one_seat"\nseed = 0\nmode = "local"\nroot = '
                    f'{json.dumps(str(root))}\n[run.stop]\ntime_s = 120\n'
                    f'mean_return = {mean_return}\n[scripts]\nenv = "env.py"\n'
                    'agent = "agent.py"\n[services.env_worker]\nnum = 1\nnum_envs = 8\n'
                    'fragment_len = 32\n[logging]\nprogress = false\ntensorboard = false\n')
    return load_config(toml)


def feed_state(run_dir: RunDir) -> dict[str, Any]:
    """The run's dashboard feed (progress, placements, replacements), or {} before the first."""
    try:
        return json.loads((run_dir.path / "feed" / "state.json").read_text())
    except (OSError, ValueError):
        return {}


def replacement_back(run_dir: RunDir) -> bool:
    """Whether the feed shows a replacement that is back (took steps, or answered)."""
    return any(r["back_s"] is not None for r in feed_state(run_dir).get("replacements", []))


def stop_when(run_dir: RunDir, predicate: Callable[[], Any], timeout_s: float,
              what: str) -> None:
    """Wait for ``predicate``, then ask the run to stop cleanly (its STOP file), so a test
    trains exactly as long as what it checks needs rather than for a padded ``time_s``."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.2)
    run_dir.stop_path.touch()


def train_until(cfg: TrainConfig, run_dir: RunDir, ready: Callable[[], Any], timeout_s: float,
                what: str, resume: ResumePlan | None = None) -> dict[str, Any]:
    """``run_training`` in a thread, stopped (STOP file) once ``ready()`` holds; its result.

    A run that ends on its own first returns what it returned; one that raised re-raises here.
    On a timeout the run is stopped before the AssertionError is raised, so no run is left
    training behind a failed test."""
    outcome: dict[str, Any] = {}

    def train() -> None:
        try:
            outcome["result"] = run_training(cfg, run_dir, resume or False)
        except BaseException as exc:  # noqa: BLE001 (handed to the test's thread)
            outcome["error"] = exc

    runner = threading.Thread(target=train, name="train_until", daemon=True)
    runner.start()
    try:
        stop_when(run_dir, lambda: not runner.is_alive() or ready(), timeout_s, what)
    finally:
        if runner.is_alive():
            run_dir.stop_path.touch()
        runner.join(120)
    if "error" in outcome:
        raise outcome["error"]
    assert "result" in outcome, f"the run did not stop within 120 s of its STOP file ({what})"
    return outcome["result"]
