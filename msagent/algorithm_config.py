"""Learning algorithms' hyperparameters, without torch: the config loader (in the driver, before
Ray starts) validates them, and the learner builds the algorithm from them."""

from __future__ import annotations

from dataclasses import dataclass, fields

from msagent.algorithm_ranges import range_errors
from msagent.errors import ConfigError


@dataclass(frozen=True)
class PPOConfig:
    """Hyperparameters of PPO; the defaults are the usual ones (CleanRL's, Atari-safe).

    For CartPole-like tasks use :data:`CARTPOLE_PPO`, tuned for wall time on 2 CPU cores.

    Attributes:
        gamma: discount factor.
        gae_lambda: GAE's bias/variance trade-off.
        clip: PPO ratio clipping range epsilon.
        vf_coef: weight of the value loss.
        ent_coef: weight of the entropy bonus.
        lr: Adam learning rate (initial value when annealed).
        epochs: passes over each batch.
        minibatches: minibatches per pass.
        max_grad_norm: global gradient norm clip (``None`` disables clipping).
        normalize_advantages: standardise advantages per minibatch.
        clip_vloss: clip value updates around the acting-time values.
        vf_clip: value clipping range (``None``: same as ``clip``).
        anneal_lr: decay the learning rate linearly to 0 over ``total_updates`` or
            ``anneal_s``, whichever ends first (as CleanRL does by default: late updates
            settle instead of swinging).
        total_updates: number of ``update`` calls planned (``anneal_lr`` needs it or
            ``anneal_s``).
        anneal_s: seconds of updating planned, counted from the first update and kept across
            ``--resume`` (a TOML's ``anneal_lr`` with neither this nor ``total_updates`` takes
            ``run.stop.time_s``).
        target_kl: stop the epochs early once approx KL exceeds this (``None``: never).
        adam_eps: Adam's epsilon.
        vtrace_clip_rho: IMPALA: truncation of V-trace's importance weights (rho-bar).
        vtrace_clip_c: IMPALA: truncation of V-trace's trace coefficients (c-bar).
        seed: seed of minibatch shuffling.
        magnet_coef: weight of KL(policy || magnet) in the loss (0: no magnet): magnetic
            mirror descent's regularization toward a reference policy, under which the last
            iterate of self-play in a two-player zero-sum game settles instead of cycling.
        magnet_rate: how far the magnet's parameters move toward the policy's after each
            update (an exponential mean: the reference moves slowly).
    """

    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2
    vf_coef: float = 0.5
    ent_coef: float = 0.0
    lr: float = 2.5e-4
    epochs: int = 4
    minibatches: int = 4
    max_grad_norm: float | None = 0.5
    normalize_advantages: bool = True
    clip_vloss: bool = True
    vf_clip: float | None = None
    anneal_lr: bool = False
    total_updates: int | None = None
    anneal_s: float | None = None
    target_kl: float | None = None
    adam_eps: float = 1e-5
    vtrace_clip_rho: float = 1.0
    vtrace_clip_c: float = 1.0
    seed: int = 0
    magnet_coef: float = 0.0
    magnet_rate: float = 0.05

    def __post_init__(self) -> None:
        """Reject values that would silently break training, naming field and value.

        Raises:
            ConfigError: e.g. ``"lr must be > 0, got -1.0"`` (ranges in
                :mod:`msagent.algorithm_ranges`).
        """
        errors = range_errors({f.name: getattr(self, f.name) for f in fields(self)})
        if errors:
            raise ConfigError("; ".join(errors))
        if self.anneal_lr and not (self.total_updates or self.anneal_s):
            raise ConfigError("anneal_lr needs total_updates or anneal_s (the planned updates "
                              "or seconds of updating; in a TOML, run.stop.time_s stands in "
                              "for anneal_s)")


CARTPOLE_PPO = PPOConfig(lr=3e-3, epochs=4, minibatches=2)
"""PPO tuned for CartPole-v1 wall time: use with 32 envs x 32-step fragments (batches of 1024)
and 64x64 tanh networks (``NetworkConfig()``). Seeds 0-23 all reached a mean return of 475
after 35k-124k env steps, about 1-4 s of training on 2 CPU cores (``benchmarks/ppo_reference.py``).
"""
CARTPOLE_NUM_ENVS = 32
"""Environments acted together (one batched ``act`` per step) in the CartPole reference."""
CARTPOLE_FRAGMENT_LEN = 32
"""Fragment length T in the CartPole reference."""
