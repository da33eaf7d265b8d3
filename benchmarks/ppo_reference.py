"""In-process PPO reference on CartPole-v1: env steps/s and wall time to a mean return of 475.

Acting is done exactly as a single-policy env worker does it (``msagent.envs.MatchCollector``
over K one-seat games): one batched ``Policy.act`` per step for all K, cut into K ``Fragment``
objects every T steps (values and log-probs recorded at acting time, V(final obs) recorded on
truncation, at the cost of one small forward pass per truncated game).

Usage::

    python benchmarks/ppo_reference.py --seed 0
    python benchmarks/ppo_reference.py --seed 1 --num-envs 8 --fragment-len 64 --json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from msagent.policy import (  # noqa: E402
    CARTPOLE_FRAGMENT_LEN,
    CARTPOLE_NUM_ENVS,
    CARTPOLE_PPO,
    PPO,
    NetworkConfig,
    Policy,
    PPOConfig,
)
from msagent.envs import MatchCollector, policy_act, solo_collector  # noqa: E402
from msagent.vocabulary import ModelKey  # noqa: E402


@dataclass
class ReferenceSettings:
    """Everything that defines one reference run besides the seed.

    Attributes:
        env_id: gymnasium id of the environment.
        num_envs: K, environments stepped together (one ``act`` call per step for all).
        fragment_len: T, steps per fragment; a PPO batch is K * T steps.
        network: actor and critic sizes.
        ppo: learner hyperparameters.
        target: mean episode return that counts as solved.
        window: number of most recent episodes the mean is taken over.
        max_steps: give up after this many env steps.
    """

    env_id: str = "CartPole-v1"
    num_envs: int = CARTPOLE_NUM_ENVS
    fragment_len: int = CARTPOLE_FRAGMENT_LEN
    network: NetworkConfig = field(default_factory=NetworkConfig)
    ppo: PPOConfig = CARTPOLE_PPO
    target: float = 475.0
    window: int = 20
    max_steps: int = 500_000


CARTPOLE_REFERENCE = ReferenceSettings()
"""The tuned CartPole-v1 settings: 32 envs x 32 steps, 64x64 tanh, ``CARTPOLE_PPO``."""


@dataclass
class RunResult:
    """Outcome of one reference run."""

    seed: int
    solved: bool
    seconds: float
    env_steps: int
    steps_per_second: float
    updates: int
    final_mean_return: float
    setup_seconds: float


def make_collector(settings: ReferenceSettings, policy: Policy, seed: int) -> MatchCollector:
    """K one-seat games acted by ``policy``, exactly as a single-policy env worker plays them."""
    return solo_collector(lambda: gym.make(settings.env_id), settings.num_envs,
                          policy_act(policy, ModelKey("main", 0)), settings.fragment_len, seed)


def _build(settings: ReferenceSettings, seed: int) -> PPO:
    """A seeded policy and its PPO learner."""
    torch.manual_seed(seed)
    probe = gym.make(settings.env_id)
    policy = Policy(probe.observation_space, probe.action_space, settings.network, seed=seed)
    probe.close()
    ppo = PPO(policy, dataclasses.replace(settings.ppo, seed=seed))
    _ = ppo.optimizer  # built lazily in a learner; here as part of the set-up, as CleanRL does
    return ppo


def run(settings: ReferenceSettings, seed: int, verbose: bool = False) -> RunResult:
    """Train until the windowed mean return reaches the target (or the step budget runs out)."""
    setup_start = time.perf_counter()
    ppo = _build(settings, seed)
    collector = make_collector(settings, ppo.policy, seed)
    start = time.perf_counter()  # like CleanRL: the clock starts once envs and agent exist
    steps, recent = 0, deque(maxlen=settings.window)
    while steps < settings.max_steps:
        fragments = collector.collect()
        steps += settings.num_envs * settings.fragment_len
        recent.extend(r.episode_return for r in collector.take_results())
        if len(recent) == settings.window and np.mean(recent) >= settings.target:
            break
        stats = ppo.update(fragments)
        if verbose and ppo.updates % 10 == 0:
            _report_progress(steps, start, recent, stats)
    seconds = time.perf_counter() - start
    for slot in collector.slots:
        slot.env.close()
    mean = float(np.mean(recent)) if recent else 0.0
    solved = len(recent) == settings.window and mean >= settings.target
    setup = start - setup_start
    return RunResult(seed, solved, seconds, steps, steps / seconds, ppo.updates, mean, setup)


def _report_progress(steps: int, start: float, recent: deque, stats: dict[str, float]) -> None:
    """Print one line of training progress."""
    mean = np.mean(recent) if recent else float("nan")
    print(f"steps {steps:7d}  t {time.perf_counter() - start:6.1f}s  return {mean:6.1f}  "
          f"kl {stats['losses/approx_kl']:.4f}  clipfrac {stats['losses/clipfrac']:.3f}")


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line overrides of the reference settings."""
    ref, ppo = CARTPOLE_REFERENCE, CARTPOLE_REFERENCE.ppo
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-envs", type=int, default=ref.num_envs)
    parser.add_argument("--fragment-len", type=int, default=ref.fragment_len)
    parser.add_argument("--hidden", type=int, nargs="+", default=list(ref.network.hidden))
    parser.add_argument("--activation", default=ref.network.activation, choices=["tanh", "relu"])
    parser.add_argument("--max-steps", type=int, default=ref.max_steps)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    for f in dataclasses.fields(PPOConfig):
        if f.name != "seed":
            _add_config_option(parser, f, getattr(ppo, f.name))
    return parser.parse_args(argv)


def _add_config_option(
    parser: argparse.ArgumentParser, spec: dataclasses.Field, default: object
) -> None:
    """One ``--name`` option per PPOConfig field; optional fields also accept ``none``."""
    flag = "--" + spec.name.replace("_", "-")
    if isinstance(default, bool):
        parser.add_argument(flag, type=lambda s: s.lower() in ("1", "true", "yes"), default=default)
        return
    convert = float if default is None else type(default)
    if "None" in str(spec.type):
        parser.add_argument(flag, type=lambda s: None if s == "none" else convert(s),
                            default=default)
    else:
        parser.add_argument(flag, type=convert, default=default)


def _settings_from(args: argparse.Namespace) -> ReferenceSettings:
    """Build ReferenceSettings from parsed arguments."""
    ppo_fields = {f.name: getattr(args, f.name) for f in dataclasses.fields(PPOConfig)
                  if f.name != "seed"}
    if ppo_fields["total_updates"] is not None:
        ppo_fields["total_updates"] = int(ppo_fields["total_updates"])
    network = dataclasses.replace(
        CARTPOLE_REFERENCE.network, hidden=tuple(args.hidden), activation=args.activation
    )
    return dataclasses.replace(
        CARTPOLE_REFERENCE, num_envs=args.num_envs, fragment_len=args.fragment_len,
        network=network, ppo=PPOConfig(**ppo_fields), max_steps=args.max_steps,
    )


def main(argv: list[str] | None = None) -> None:
    """Run one seed and print env steps/s and time-to-target."""
    args = _parse_args(argv)
    torch.set_num_threads(args.threads)
    result = run(_settings_from(args), args.seed, args.verbose)
    if args.json:
        print(json.dumps(dataclasses.asdict(result)))
        return
    status = "reached" if result.solved else "did NOT reach"
    target = CARTPOLE_REFERENCE.target
    print(f"seed {result.seed}: {status} {target:.0f} in {result.seconds:.1f} s, "
          f"{result.env_steps} env steps, {result.steps_per_second:,.0f} env steps/s, "
          f"{result.updates} updates, mean return {result.final_mean_return:.1f} "
          f"(+{result.setup_seconds:.2f} s setup: envs, networks, optimizer)")


if __name__ == "__main__":
    main()
