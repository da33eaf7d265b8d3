"""play_games: seat rotation, returns and outcomes per actor; wdl and the Wilson interval."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

from msagent.envs.adapters import as_multi_agent
from msagent.envs.play import GameRecord, outcomes, play_games, seating, wdl, wilson_interval
from msagent.errors import ConfigError


def test_wilson_interval_matches_a_hand_computed_example() -> None:
    # 8 wins of 10, z = 1.96: center = (0.8 + 0.19208) / 1.38416 = 0.716738,
    # half = 1.96 * sqrt(0.016 + 0.009604) / 1.38416 = 0.226581
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.490157, abs=1e-4) and high == pytest.approx(0.943319, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(0, 20)
    assert low == 0.0 and high == pytest.approx(0.16113, abs=1e-4)


def test_seating_rotates_every_actor_through_every_seat() -> None:
    assert [seating(g, 3) for g in range(3)] == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    assert seating(5, 2, rotate=False) == (0, 1)


def test_outcomes_compare_returns() -> None:
    assert outcomes([1.0, -1.0]) == (1, -1) and outcomes([0.0, 0.0]) == (0, 0)
    assert outcomes([2.0, 2.0, 1.0]) == (0, 0, -1) and outcomes([3.0]) == (0,)


def first_legal(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A seat actor playing its lowest legal action."""
    return masks.argmax(axis=1)


def last_legal(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A seat actor playing its highest legal action."""
    return masks.shape[1] - 1 - masks[:, ::-1].argmax(axis=1)


def test_play_games_rotates_seats_and_reports_each_actors_return() -> None:
    # tic-tac-toe, lowest cell vs highest cell: whoever moves first completes a line first
    make = lambda: as_multi_agent(pyspiel.load_game("tic_tac_toe"))  # noqa: E731
    records = play_games(make, [first_legal, last_legal], games=4, seed=0)
    assert [r.seat_actors for r in records] == [(0, 1), (1, 0)] * 2
    assert all(r.outcomes == ((1, -1) if r.seat_actors == (0, 1) else (-1, 1)) for r in records)
    assert records[0].returns == (1.0, -1.0) and records[0].length == 5
    score = wdl(records, 0)
    assert (score.wins, score.draws, score.losses) == (2, 0, 2)
    assert [(s.wins, s.losses) for s in score.by_seat] == [(2, 0), (0, 2)]


def test_play_games_without_rotation_and_simultaneous_batches() -> None:
    calls = []

    def recording(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        calls.append(obs.shape[0])
        return first_legal(obs, masks)

    make = lambda: as_multi_agent(pyspiel.load_game("matrix_rps"))  # noqa: E731
    records = play_games(make, [recording, last_legal], games=3, seed=1, rotate=False)
    assert all(r.seat_actors == (0, 1) and r.length == 1 for r in records)
    assert records[0].outcomes == (1, -1)  # rock (0) beats scissors (2)
    assert calls == [1, 1, 1]


def test_actor_count_must_match_seats() -> None:
    make = lambda: as_multi_agent(pyspiel.load_game("tic_tac_toe"))  # noqa: E731
    with pytest.raises(ConfigError, match="2 seats .* got 1 actors"):
        play_games(make, [first_legal], games=1, seed=0)


def test_wdl_rates() -> None:
    records = [GameRecord((0, 1), (1.0, -1.0), (1, -1), 5),
               GameRecord((1, 0), (0.0, 0.0), (0, 0), 9),
               GameRecord((0, 1), (-1.0, 1.0), (-1, 1), 4),
               GameRecord((1, 0), (1.0, -1.0), (1, -1), 6)]
    score = wdl(records, 0)
    assert (score.games, score.win_rate, score.draw_rate, score.loss_rate) == (4, 0.5, 0.25, 0.25)
    assert [(s.wins, s.draws, s.losses) for s in score.by_seat] == [(1, 0, 1), (1, 1, 0)]
    assert score.win_interval == wilson_interval(2, 4)


def test_a_mixed_actor_plays_one_member_per_game_drawn_by_its_seat_s_weights() -> None:
    from msagent.envs.policy_actors import MixedActor

    make = lambda: as_multi_agent(pyspiel.load_game("tic_tac_toe"))  # noqa: E731
    # seat 0: always the lowest-cell member; seat 1: the highest-cell one 3 games in 4
    mixed = MixedActor([first_legal, last_legal], [[1.0, 0.0], [0.25, 0.75]], seed=1)
    records = play_games(make, [mixed, first_legal], games=400, seed=0)
    first_seat = [r for r in records if r.seat_of(0) == 0]
    # from seat 0 the lowest-cell member mirrors its opponent and wins every game
    assert all(r.outcomes[0] == 1 for r in first_seat)
    second = [r for r in records if r.seat_of(0) == 1]
    # from seat 1 both members lose to the lowest-cell opponent: the lowest-cell member after
    # 7 moves (the opponent completes the diagonal 2-4-6), the highest-cell one after 5
    assert {r.length for r in second} == {5, 7} and all(r.outcomes[0] == -1 for r in second)
    share = sum(r.length == 5 for r in second) / len(second)
    assert abs(share - 0.75) < 0.08, share
    with pytest.raises(ValueError, match="non-negative weights"):
        MixedActor([first_legal], [[0.0]])
