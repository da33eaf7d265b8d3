"""End to end: ``msagent train examples/fightingice_league.toml`` on the fake FightingICE
server (no Java), stopped (``msagent stop``'s STOP file) once games are played, both players
learned and snapshotted and the evaluator played the random bot; no server process outlives
the run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyftg")

from tests.envs.cli_runs import newest_version, random_bot_seats, train_until  # noqa: E402

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
           "--set", "run.stop.time_s=150",
           "--set", "league.roles.main.snapshot_every_updates=5",
           "--set", "league.roles.main_exploiter.snapshot_every_updates=5",
           "--set", f"run.root={json.dumps(str(tmp_path / 'runs'))}",
           "--set", "logging.progress=false", "--set", "logging.tensorboard=false",
           "--result-json", str(result_json)]
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    env.pop("FIGHTINGICE_HOME", None)
    code, stdout, stderr = train_until(cmd, tmp_path / "runs", _shown, env, REPO)
    assert code == 0, stdout[-3000:] + stderr[-3000:]
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


def _shown(feed: dict, snapshots: set[str]) -> bool:
    """Both players past 5 updates (two snapshots each), 3 episodes and 1,000 steps played,
    and the random bot played: everything the test checks."""
    progress = feed.get("progress", {})
    return (all(newest_version(snapshots, p) >= 6 for p in ("main", "main_exploiter"))
            and progress.get("episodes", 0) >= 3 and progress.get("env_steps", 0) > 1000
            and bool(random_bot_seats(feed)))
