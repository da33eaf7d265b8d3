"""ScalarWriter: tags written from snapshots, no repeats, nothing when disabled."""

from __future__ import annotations

import pytest
import subprocess
import sys
from pathlib import Path

from msagent.telemetry import Metrics, ScalarWriter


def test_writes_the_expected_tags(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    metrics = Metrics(window=2)
    with ScalarWriter(tmp_path / "tb") as writer:
        metrics.add_env_steps(100)
        metrics.record_episode(10.0, 10)
        metrics.record_losses({"policy": 0.5}, policy_version=1)
        writer.write(metrics.snapshot())
        metrics.add_env_steps(100)
        writer.write(metrics.snapshot())  # no new episode or update: no repeats
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"charts/episode_return", "charts/episode_length", "losses/policy",
            "throughput/env_steps_per_s"} <= tags
    assert [(e.step, e.value) for e in events.Scalars("charts/episode_return")] == [(100, 10.0)]
    assert [e.step for e in events.Scalars("throughput/env_steps_per_s")] == [100, 200]


def test_scalars_only_repeat_what_changed(tmp_path: Path) -> None:
    writer = ScalarWriter(tmp_path, enabled=True)
    metrics = Metrics()
    metrics.record_episode(1.0, 1)
    first = dict(writer.scalars(metrics.snapshot()))
    second = dict(writer.scalars(metrics.snapshot()))
    assert "charts/episode_return" in first and "charts/episode_return" not in second


def test_disabled_writer_writes_and_imports_nothing(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from msagent.telemetry import ScalarWriter, Metrics\n"
        f"w = ScalarWriter({str(tmp_path / 'tb')!r}, enabled=False)\n"
        "w.write(Metrics().snapshot()); w.close()\n"
        "assert 'torch.utils.tensorboard' not in sys.modules\n"
        "assert 'torch' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "tb").exists()


README_TAGS = {
    "charts/episode_return", "charts/episode_length", "charts/episodes", "charts/policy_version",
    "losses/policy", "losses/value", "losses/entropy", "losses/approx_kl", "losses/clipfrac",
    "losses/explained_variance", "learner/lr", "throughput/env_steps_per_s",
}
"""The tags docs/guides/runs.md documents for a PPO run (plus ``counters/<event>`` when events
happen); the README documented them before the docs site."""


@pytest.mark.slow
def test_a_training_run_writes_the_tags_the_readme_documents(inline_only: str,
                                                             tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from msagent.rundir import RunDir
    from msagent.train import run_training
    from tests.train.helpers import example_config

    cfg = example_config(tmp_path, "local", "logging.tensorboard=true", "run.stop.mean_return=0",
                         "run.stop.env_steps=20000", "logging.log_every_s=0.1")
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    run_training(cfg, run_dir, False)
    events = EventAccumulator(str(run_dir.tensorboard_dir))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {t for t in tags if not t.startswith("counters/")} == README_TAGS
    readme = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "runs.md").read_text()
    assert all(f"`{tag}`" in readme for tag in README_TAGS)
