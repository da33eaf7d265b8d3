"""The environment script of the CartPole example: ``make_env(**[env])`` -> a Gymnasium env."""

import gymnasium as gym


def make_env(id: str = "CartPole-v1") -> gym.Env:  # noqa: A002 - the TOML key is "id"
    """One CartPole environment (truncated at 500 steps by its time limit)."""
    return gym.make(id)
