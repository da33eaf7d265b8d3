"""Game symmetries as data augmentation (``Policy(symmetries=...)``, ``Symmetry.mirror``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from msagent.errors import ConfigError
from msagent.policy import PPO, ActionSpec, NetworkConfig, Policy, PPOConfig, Symmetry
from msagent.policy.algorithms.impala import IMPALA
from tests.policy.helpers import acted_fragment

BOARD = (6, 7, 2)
MIRROR = Symmetry.mirror(axis=1, actions=7)
CNN = NetworkConfig(activation="relu", cnn_features=32, shared=True)


def _boards(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, (n, *BOARD)).astype(np.float32)


def _masked_fragment(policy: Policy, seed: int) -> object:
    obs = _boards(8, seed)
    mask = np.ones((8, 7), bool)
    mask[:, 0] = False  # column 0 full: after the mirror it is column 6 that is full
    out = policy.act(obs, action_mask=mask)
    fragment = acted_fragment(policy, obs, seed)
    return dataclasses.replace(fragment, actions=out.actions, logp=out.logp, action_mask=mask)


def test_the_mirror_reverses_columns_moves_and_the_mask() -> None:
    policy = Policy(BOARD, ActionSpec.discrete(7), CNN, seed=0, symmetries=[MIRROR])
    batch = PPO(policy).prepare([_masked_fragment(policy, s) for s in range(2)])
    n = len(batch["actions"]) // 2
    assert len(batch["actions"]) == 2 * 16
    np.testing.assert_array_equal(batch["obs"][n:], batch["obs"][:n].flip(2))
    np.testing.assert_array_equal(batch["actions"][n:], 6 - batch["actions"][:n])
    assert not batch["action_mask"][n:, 6].any() and batch["action_mask"][n:, :6].all()
    for column in ("logp", "values", "advantages", "returns"):
        np.testing.assert_array_equal(batch[column][n:], batch[column][:n])
    twice = MIRROR.apply(MIRROR.apply(batch, 3), 3)
    for column in ("obs", "actions", "action_mask"):
        np.testing.assert_array_equal(twice[column], batch[column])


def test_without_symmetries_the_batch_is_unchanged() -> None:
    policy = Policy(BOARD, ActionSpec.discrete(7), CNN, seed=0)
    batch = PPO(policy).prepare([_masked_fragment(policy, s) for s in range(2)])
    assert len(batch["actions"]) == 16


def test_impala_mirrors_whole_fragments() -> None:
    policy = Policy(BOARD, ActionSpec.discrete(7), CNN, seed=0, symmetries=[MIRROR])
    batch = IMPALA(policy).prepare([_masked_fragment(policy, s) for s in range(3)])
    assert batch["obs"].shape == (6, 8, *BOARD)
    np.testing.assert_array_equal(batch["obs"][3:], batch["obs"][:3].flip(3))
    np.testing.assert_array_equal(batch["actions"][3:], 6 - batch["actions"][:3])


def _mirrored_move_probability(symmetries: list[Symmetry]) -> tuple[float, float]:
    """P(move 6 | mirrored board) before and after PPO rewards move 0 on the board."""
    policy = Policy(BOARD, ActionSpec.discrete(7), CNN, seed=0, symmetries=symmetries)
    board = _boards(1, seed=3).repeat(16, axis=0)
    fragment = acted_fragment(policy, board, 0)
    fragment = dataclasses.replace(
        fragment, actions=np.where(np.arange(16) % 2 == 0, 0, 3),
        rewards=np.where(np.arange(16) % 2 == 0, 1.0, -1.0).astype(np.float32),
        terminated=np.ones(16, bool))
    mirrored = torch.as_tensor(board[:1]).flip(2).numpy()
    before = policy.action_probs(mirrored)[0, 6]
    ppo = PPO(policy, PPOConfig(epochs=4, minibatches=1, lr=3e-3, ent_coef=0.0))
    for _ in range(8):  # on-policy rounds: the recorded log-probabilities are the current ones
        logp, _, _ = policy.evaluate(fragment.obs, fragment.actions)
        ppo.update([dataclasses.replace(fragment, logp=logp.detach().numpy())])
    return float(before), float(policy.action_probs(mirrored)[0, 6])


def test_training_on_a_move_teaches_its_mirror_image() -> None:
    before, after = _mirrored_move_probability([MIRROR])
    plain_before, plain_after = _mirrored_move_probability([])
    assert after > before + 0.2
    assert after - before > 2 * (plain_after - plain_before)


@pytest.mark.parametrize("make, words", [
    (lambda: Symmetry((1,), (0, 1, 1)), "once"),
    (lambda: Policy(BOARD, ActionSpec.discrete(6), CNN, symmetries=[MIRROR]), "6 actions"),
    (lambda: Policy(BOARD, ActionSpec.discrete(7), CNN, symmetries=[Symmetry.mirror(3, 7)]),
     "not axes"),
    (lambda: Policy((4,), ActionSpec.box(7), symmetries=[Symmetry((0,), tuple(range(7)))]),
     "discrete"),
    (lambda: Policy((4,), ActionSpec.discrete(7), NetworkConfig(lstm=8),
                    symmetries=[Symmetry((0,), tuple(range(7)))]), "recurrent"),
])
def test_a_symmetry_that_does_not_fit_is_refused(make, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        make()
