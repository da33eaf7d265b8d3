"""Samplers: prioritized frequencies, weights, uniform removal and seeded reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from msagent.buffer import PrioritizedSampler, UniformSampler, make_sampler
from msagent.errors import ConfigError
from tests.buffer.helpers import make_table

CHI2_DF3_P0001 = 16.27  # chi-square critical value, 3 degrees of freedom, p = 0.001


def _chi2(counts: np.ndarray, probabilities: np.ndarray) -> float:
    """Pearson's statistic of observed counts against expected probabilities."""
    expected = counts.sum() * probabilities
    return float(((counts - expected) ** 2 / expected).sum())


def test_prioritized_frequencies_follow_priority_to_the_alpha() -> None:
    priorities = np.array([1.0, 2.0, 3.0, 4.0, 0.0])
    sampler = PrioritizedSampler(8, alpha=0.7, seed=3)
    sampler.add([10, 11, 12, 13, 14], priorities)
    draw = sampler.sample(40_000)
    expected = priorities[:4] ** 0.7 / (priorities[:4] ** 0.7).sum()
    counts = np.array([(draw.keys == key).sum() for key in (10, 11, 12, 13)])
    assert counts.sum() == 40_000  # the zero-priority key 14 is never drawn
    assert _chi2(counts, expected) < CHI2_DF3_P0001
    np.testing.assert_allclose(draw.probabilities, expected[draw.keys - 10])


def test_prioritized_frequencies_rejected_when_alpha_is_ignored() -> None:
    sampler = PrioritizedSampler(4, alpha=1.0, seed=3)
    sampler.add([0, 1, 2, 3], np.array([1.0, 2.0, 3.0, 4.0]))
    counts = np.bincount(sampler.sample(20_000).keys, minlength=4)
    assert _chi2(counts, np.full(4, 0.25)) > CHI2_DF3_P0001  # the test can tell them apart


def test_alpha_zero_is_uniform() -> None:
    sampler = PrioritizedSampler(4, alpha=0.0, seed=0)
    sampler.add([0, 1, 2, 3], np.array([1.0, 10.0, 100.0, 1000.0]))
    counts = np.bincount(sampler.sample(20_000).keys, minlength=4)
    assert _chi2(counts, np.full(4, 0.25)) < CHI2_DF3_P0001


def test_importance_weights_normalized_by_the_largest() -> None:
    sampler = PrioritizedSampler(4, alpha=1.0, beta=1.0)
    np.testing.assert_allclose(sampler.weights(np.array([0.1, 0.4, 0.2])), [1.0, 0.25, 0.5])
    assert PrioritizedSampler(4, alpha=1.0).weights(np.array([0.1, 0.4])).tolist() == [1, 1]


def test_prioritized_update_and_remove_change_the_distribution() -> None:
    sampler = PrioritizedSampler(4, alpha=1.0, seed=1)
    sampler.add([0, 1, 2], np.ones(3))
    sampler.update([0, 1], np.array([0.0, 5.0]))
    sampler.remove([1])
    sampler.add([3], np.array([0.0]))
    assert set(sampler.sample(500).keys.tolist()) == {2}


def test_uniform_sampler_draws_only_live_keys_after_swap_removal() -> None:
    sampler = UniformSampler(10, seed=0)
    sampler.add(list(range(10)), np.ones(10))
    sampler.remove([3, 9, 0])
    draw = sampler.sample(5_000)
    assert set(draw.keys.tolist()) == {1, 2, 4, 5, 6, 7, 8}
    assert np.all(draw.probabilities == pytest.approx(1 / 7))


@pytest.mark.parametrize("kind", ["uniform", "prioritized"])
def test_same_seed_same_sequence_different_seed_different(kind: str) -> None:
    def keys(seed: int) -> list[int]:
        table = make_table(kind, max_size=50, seed=seed)
        table.insert(list(range(50)), priorities=list(np.linspace(1, 5, 50)))
        return [s.key for _ in range(5) for s in table.sample(20)]

    assert keys(7) == keys(7)
    assert keys(7) != keys(8)


def test_unknown_sampler_kind_lists_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"'best'.*uniform.*prioritized"):
        make_sampler("best", 10)


@pytest.mark.parametrize("params", [{}, {"alpha": -1.0}, {"alpha": 1.0, "beta": 2.0}, {"a": 1}])
def test_bad_prioritized_params_are_config_errors(params: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        make_sampler("prioritized", 10, params=params)
