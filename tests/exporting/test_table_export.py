"""``msagent export RUN_DIR --format openspiel [--policy P] OUT`` of a league that is not PSRO:
a trained player as a tabular policy, its NashConv checked with OpenSpiel's own."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from msagent.cli import USER_ERROR_EXIT, app
from msagent.envs.adapters.openspiel import OpenSpielAdapter
from msagent.exporting.run_export import load_run_policy
from msagent.psro.tabular_io import read_policy, to_openspiel
from tests.exporting.test_cli_export import train_league

pytestmark = pytest.mark.slow  # runs training (or a site build): not in the fast tier

pyspiel = pytest.importorskip("pyspiel")
exploitability = pytest.importorskip("open_spiel.python.algorithms.exploitability")

OPENSPIEL = Path(__file__).resolve().parents[2] / "examples" / "openspiel"
runner = CliRunner()


@pytest.fixture(scope="module")
def kuhn_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A few seconds of a two-player Kuhn poker league (an OpenSpiel game, no PSRO)."""
    return train_league(tmp_path_factory.mktemp("kuhn"), OPENSPIEL / "openspiel_env.py",
                        OPENSPIEL / "openspiel_agent.py", '[env]\ngame = "kuhn_poker"\n')


def export(run: Path, out: Path, *args: str) -> tuple[int, str]:
    """``msagent export RUN --format openspiel OUT ARGS``: (exit code, output)."""
    result = runner.invoke(app, ["export", str(run), "--format", "openspiel", str(out), *args])
    return result.exit_code, result.output


def printed_nash_conv(output: str) -> float:
    """The NashConv the command printed."""
    return float(re.search(r"NashConv ([0-9.]+)", output)[1])


@pytest.mark.parametrize("player", ["main", "main_exploiter"])
def test_a_league_player_s_nash_conv_is_openspiel_s(kuhn_run: Path, tmp_path: Path,
                                                   player: str) -> None:
    out = tmp_path / f"{player}.json"
    code, output = export(kuhn_run, out, "--policy", player)
    assert code == 0, output
    assert "over 12 information states" in output, output
    game, policy = to_openspiel(read_policy(out))
    assert printed_nash_conv(output) == pytest.approx(exploitability.nash_conv(game, policy),
                                                      abs=2e-6)


def test_the_table_is_the_checkpoint_s_policy(kuhn_run: Path, tmp_path: Path) -> None:
    code, output = export(kuhn_run, tmp_path / "main.json")
    assert code == 0, output
    table = read_policy(tmp_path / "main.json")["policy"]
    policy = load_run_policy(kuhn_run, "main")[0]
    game = pyspiel.load_game("kuhn_poker")
    adapter = OpenSpielAdapter(game)
    for cards in [(0, 1), (2, 0), (1, 2)]:
        state = game.new_initial_state()
        for card in cards:
            state.apply_action(card)
        for _ in range(2):  # the first player's and the second player's first decision
            seat = state.current_player()
            mask = np.zeros(game.num_distinct_actions(), bool)
            mask[state.legal_actions()] = True
            probs = policy.action_probs(adapter.observe(state, seat)[None], mask[None])[0]
            assert dict(table[state.information_state_string(seat)]) == pytest.approx(
                {a: probs[a] for a in state.legal_actions()}, abs=1e-6)
            state.apply_action(0)


def test_greedy_plays_the_most_likely_action(kuhn_run: Path, tmp_path: Path) -> None:
    code, output = export(kuhn_run, tmp_path / "greedy.json", "--greedy")
    assert code == 0 and "main (greedy)" in output, output
    data = read_policy(tmp_path / "greedy.json")
    assert all(sorted(p for _, p in row) == [0.0, 1.0] for row in data["policy"].values())
    game, policy = to_openspiel(data)
    assert printed_nash_conv(output) == pytest.approx(exploitability.nash_conv(game, policy),
                                                      abs=2e-6)


def test_an_unknown_player_is_refused(kuhn_run: Path, tmp_path: Path) -> None:
    code, output = export(kuhn_run, tmp_path / "x.json", "--policy", "nobody")
    assert code == USER_ERROR_EXIT and "unknown policy 'nobody'" in output, output
    assert not (tmp_path / "x.json").exists()


def test_a_game_that_is_not_openspiel_is_refused(tmp_path: Path) -> None:
    tictactoe = OPENSPIEL.parent / "tictactoe"
    run = train_league(tmp_path, tictactoe / "tictactoe_env.py", tictactoe / "tictactoe_agent.py")
    code, output = export(run, tmp_path / "x.json")
    assert code == USER_ERROR_EXIT, output
    assert "cannot write main" in output and "not an OpenSpiel game" in output, output
    assert not (tmp_path / "x.json").exists()


def test_the_league_s_mixture_is_written_from_its_snapshots(kuhn_run: Path,
                                                             tmp_path: Path) -> None:
    """``--policy league``: the checkpoint's mixture of snapshot files, its NashConv as the
    run recorded it and as OpenSpiel measures the file."""
    code, output = export(kuhn_run, tmp_path / "league.json", "--policy", "league")
    assert code == 0, output
    recorded = newest_mixture(kuhn_run)
    game, policy = to_openspiel(read_policy(tmp_path / "league.json"))
    assert printed_nash_conv(output) == pytest.approx(exploitability.nash_conv(game, policy),
                                                      abs=2e-6)
    assert printed_nash_conv(output) == pytest.approx(recorded["nash_conv"], abs=2e-6)


def newest_mixture(run: Path) -> dict:
    """The league's mixture in the run's newest checkpoint."""
    from msagent.psro.checkpoint import newest_checkpoint
    from msagent.rundir import RunDir

    return newest_checkpoint(RunDir.open(run)).state["league"]["mixture"]


@pytest.fixture(scope="module")
def goofspiel_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A few seconds of a goofspiel league (4 cards, hidden bids: simultaneous moves)."""
    return train_league(tmp_path_factory.mktemp("goofspiel"), OPENSPIEL / "openspiel_env.py",
                        OPENSPIEL / "openspiel_agent.py",
                        '[env]\ngame = "goofspiel(num_cards=4,imp_info=True,'
                        'points_order=descending)"\n')


@pytest.mark.parametrize("policy", ["main", "league"])
def test_a_simultaneous_game_s_player_and_mixture_export_with_openspiel_s_nash_conv(
        goofspiel_run: Path, tmp_path: Path, policy: str) -> None:
    out = tmp_path / f"{policy}.json"
    code, output = export(goofspiel_run, out, "--policy", policy)
    assert code == 0, output
    assert "over 162 information states" in output, output
    data = read_policy(out)
    assert data["game"].startswith("turn_based_simultaneous_game(game=goofspiel(")
    game, tabular = to_openspiel(data)
    assert printed_nash_conv(output) == pytest.approx(exploitability.nash_conv(game, tabular),
                                                      abs=2e-6)


def test_the_league_s_mixture_plays_as_a_player_of_msagent_evaluate(kuhn_run: Path) -> None:
    """``msagent evaluate --player league``: the checkpoint's mixture, one snapshot per game
    drawn by the seat's weights (``MixedActor``, tested in tests/envs/test_play.py)."""
    from msagent.evaluate import evaluate_run

    result = runner.invoke(app, ["evaluate", str(kuhn_run), "--player", "league", "--opponent",
                                 "random", "--games", "40"])
    assert result.exit_code == 0, result.output
    assert "league (mixture of" in result.output
    found = evaluate_run(kuhn_run, "league", opponent="random", games=400, seed=3)
    members = {m for seat in newest_mixture(kuhn_run)["seats"] for m in seat}
    assert found.player == f"league (mixture of {len(members)} snapshots)"
    assert found.result.games == 400 and [s.games for s in found.result.by_seat] == [200, 200]
