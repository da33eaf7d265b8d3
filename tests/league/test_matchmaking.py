"""PFSP weightings and the opponent-drawing functions."""

from __future__ import annotations

import numpy as np
import pytest

from msagent.league import fictitious_self_play, from_distribution, pfsp, pfsp_weights, self_play
from msagent.vocabulary import PolicyRef

P = np.array([0.2, 0.5, 0.9])


@pytest.mark.parametrize(("weighting", "expected"), [
    ("hard", [0.64 / 0.9, 0.25 / 0.9, 0.01 / 0.9]),
    ("variance", [0.32, 0.5, 0.18]),
    ("linear", [0.8 / 1.4, 0.5 / 1.4, 0.1 / 1.4]),
    ("linear_capped", [5 / 11, 5 / 11, 1 / 11]),
])
def test_pfsp_weights_of_each_weighting(weighting: str, expected: list[float]) -> None:
    np.testing.assert_allclose(pfsp_weights(P, weighting), expected)


def test_hard_weighting_uses_the_exponent() -> None:
    np.testing.assert_allclose(pfsp_weights(P, "hard", pfsp_exponent=1.0), [0.8 / 1.4, 0.5 / 1.4,
                                                                            0.1 / 1.4])


def test_all_zero_weights_fall_back_to_uniform() -> None:
    np.testing.assert_allclose(pfsp_weights(np.array([1.0, 0.0, 1.0]), "variance"), [1 / 3] * 3)


def test_unknown_weighting_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown PFSP weighting 'harsh'.*linear_capped"):
        pfsp_weights(P, "harsh")


def test_pfsp_draws_follow_the_weights() -> None:
    rng = np.random.default_rng(0)
    draws = [pfsp(["a", "b", "c"], P, "variance", rng) for _ in range(4000)]
    shares = [draws.count(x) / 4000 for x in "abc"]
    np.testing.assert_allclose(shares, [0.32, 0.5, 0.18], atol=0.03)


def test_a_zero_probability_candidate_is_never_drawn() -> None:
    rng = np.random.default_rng(1)
    assert {from_distribution("abc", np.array([0.5, 0.0, 0.5]), rng) for _ in range(300)} == {
        "a", "c"}


def test_fictitious_self_play_is_uniform_and_self_play_is_the_player() -> None:
    rng = np.random.default_rng(2)
    draws = [fictitious_self_play([1, 2, 3, 4], rng) for _ in range(4000)]
    assert all(abs(draws.count(x) / 4000 - 0.25) < 0.03 for x in (1, 2, 3, 4))
    assert self_play("main") == PolicyRef.player("main")


def test_drawing_from_no_candidates_fails_clearly() -> None:
    with pytest.raises(ValueError, match="no candidates"):
        fictitious_self_play([], np.random.default_rng(0))
