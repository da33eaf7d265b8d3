"""End to end: ``msagent train examples/fightingice_league.toml`` for a minute on the fake
FightingICE server (no Java): games are played, both players learn and snapshot, the
evaluator plays the random bot, and no server process outlives the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyftg")

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "fightingice_league.toml"


def fake_servers() -> set[int]:
    """Pids of running fake FightingICE servers."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"msagent.envs.games.fightingice.fake_server" in cmd:
                found.add(int(entry.name))
    return found


@pytest.mark.slow
def test_a_short_league_on_the_fake_server(tmp_path: Path) -> None:
    before = fake_servers()
    result_json = tmp_path / "result.json"
    cmd = [sys.executable, "-m", "msagent", "train", str(EXAMPLE), "--mode", "local",
           "--set", "env.fake=true", "--set", "env.round_frames=600",
           "--set", "run.stop.time_s=25",
           "--set", f"run.root={json.dumps(str(tmp_path / 'runs'))}",
           "--set", "logging.progress=false", "--set", "logging.tensorboard=false",
           "--result-json", str(result_json)]
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    env.pop("FIGHTINGICE_HOME", None)
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=400, cwd=REPO)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(result_json.read_text())
    assert result["env_steps"] > 1000 and result["episodes"] >= 3, result
    assert result["league"]["players"]["main"]["updates"] >= 5, result["league"]["players"]
    assert result["league"]["players"]["main_exploiter"]["updates"] >= 5
    (run_dir,) = list((tmp_path / "runs").iterdir())
    main_snapshots = list((run_dir / "snapshots").glob("main@*.safetensors"))
    assert len(main_snapshots) >= 2, main_snapshots
    games = sum(r["games"] for r in result["league"]["eval"] if r["opponent"] == "bot:random")
    assert games >= 1, result["league"]["eval"]
    assert fake_servers() <= before, "fake servers outlived the run"
