"""``msagent validate-env``: check a user's env script before training on it.

The script must define ``make_env(**env_params)`` returning something
:func:`msagent.envs.adapters.as_multi_agent` accepts. PettingZoo envs also go through
PettingZoo's own API test. Then random legal games are played through the adapter, checking
every turn: seats to act, observations against the space, masks, rewards.
"""

from __future__ import annotations

import contextlib
import io
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from msagent.envs.adapters import as_multi_agent
from msagent.envs.adapters.base import multi_nvec
from msagent.envs.bots import random_action
from msagent.envs.teams import teams_of
from msagent.envs.checks import ObsChecker
from msagent.envs.multi_agent import MultiAgentEnv, Turn
from msagent.errors import ConfigError, EnvDataError, MsagentError, ScriptError
from msagent.user_scripts import script_function

MESSAGE_CHARS = 400
"""How much of PettingZoo's API test failure message the report keeps (on one line)."""

PLAY_CHECKS = ("seats to act", "observations", "action masks", "rewards", "env runs")
"""The checks of the random games, in report order."""


@dataclass
class Check:
    """One named check: passed or not, with what it found."""

    name: str
    passed: bool
    message: str = ""


@dataclass
class Report:
    """What ``validate_env`` found about one env script."""

    script: str
    checks: list[Check] = field(default_factory=list)
    kind: str = ""
    seats: tuple[str, ...] = ()
    observation_space: str = ""
    action_space: str = ""
    turns: int = 0
    games: int = 0
    avg_length: float | None = None
    steps_per_s: float = 0.0

    @property
    def ok(self) -> bool:
        """Every check passed (and there was at least one)."""
        return bool(self.checks) and all(c.passed for c in self.checks)

    def add(self, name: str, problem: str | None, passed_message: str = "") -> bool:
        """Record check ``name``: failed with ``problem``, else passed; whether it passed."""
        self.checks.append(Check(name, problem is None, problem or passed_message))
        return problem is None

    def render(self) -> str:
        """The report as text, one check a line."""
        lines = [f"env script: {self.script}"]
        if self.kind:
            lines += [f"adapter: {self.kind}", f"seats: {', '.join(self.seats)}",
                      f"observation_space: {self.observation_space}",
                      f"action_space: {self.action_space}"]
        lines += [f"[{'PASS' if c.passed else 'FAIL'}] {c.name}" + (f": {c.message}"
                                                                   if c.message else "")
                  for c in self.checks]
        if self.turns:
            length = "n/a (no game ended)" if self.avg_length is None else f"{self.avg_length:.1f}"
            lines.append(f"random play: {self.turns} turns, {self.games} games, average game "
                         f"length {length}, {self.steps_per_s:.0f} steps/s")
        lines.append("all checks passed" if self.ok else "some checks FAILED")
        return "\n".join(lines)


def env_params(overrides: list[str]) -> dict[str, Any]:
    """``make_env`` keyword arguments from ``KEY=VALUE`` texts, so the ``--set env.KEY=VALUE``
    a user gives ``msagent train`` works here too (``env.`` is dropped).

    Raises:
        ConfigError: a text is not ``KEY=VALUE``, or names a setting outside ``[env]``.
    """
    from msagent.config.overrides import parse_override

    params = {}
    for text in overrides:
        key, value = parse_override(text)
        key = key.removeprefix("env.")
        if "." in key:
            raise ConfigError(f"--set {text}: validate-env takes make_env parameters "
                              f"(noop_max=30, or env.noop_max=30 as for msagent train), "
                              f"not the setting {key!r}")
        params[key] = value
    return params


def validate_env(env_script: str, env_params: dict[str, Any], steps: int = 1000,
                 seed: int = 0) -> Report:
    """Check a user's env script; the report lists every check passed or failed."""
    report = Report(env_script)
    make = _make_env(env_script, env_params, report)
    game = None if make is None else _adapt(make, env_script, report)
    if game is None:
        return report
    report.kind, report.seats = type(game).__name__, tuple(game.seats)
    report.observation_space, report.action_space = str(game.observation_space), str(
        game.action_space)
    if report.kind in ("AECAdapter", "ParallelAdapter"):
        _pettingzoo_api_test(make, report)
    report.add("teams", *_teams(game))
    report.add("policy spaces", _policy_spaces(game), "msagent's policies can act in them")
    try:
        _play(game, steps, seed, report)
    finally:
        _close(game)
    return report


def _make_env(env_script: str, env_params: dict[str, Any], report: Report) -> Any:
    """A zero-argument env maker after one successful call (None when make_env fails)."""
    try:
        make_env = script_function(env_script, "make_env")
        make_env(**env_params)
    except MsagentError as exc:
        report.add("make_env", str(exc))
        return None
    except Exception as exc:
        report.add("make_env", f"make_env(**{env_params!r}) raised {type(exc).__name__}: {exc}")
        return None
    report.add("make_env", None, f"make_env(**{env_params!r}) returned an env")
    return lambda: make_env(**env_params)


def _adapt(make: Any, env_script: str, report: Report) -> MultiAgentEnv | None:
    """The env as a multi-seat game, or None with the failed check recorded."""
    try:
        game = as_multi_agent(make(), label=env_script)
    except MsagentError as exc:
        report.add("recognised env", str(exc))
        return None
    except Exception as exc:  # the env's own code failed while being adapted
        report.add("recognised env", f"adapting the env raised {type(exc).__name__}: {exc}")
        return None
    report.add("recognised env", None, type(game).__name__)
    return game


def _policy_spaces(game: MultiAgentEnv) -> str | None:
    """Why an ``msagent.policy.Policy`` (what ``make_policy`` must return) cannot take the game's
    observation or action space, with the fix; None when it can."""
    from msagent.policy.spaces import ActionSpec, observation_shape

    try:
        observation_shape(game.observation_space)
        ActionSpec.from_space(game.action_space)
    except ScriptError as exc:
        return str(exc)
    return None


def _pettingzoo_api_test(make: Any, report: Report) -> None:
    """Run PettingZoo's own API test on a fresh env; record its failure message."""
    from pettingzoo.test import api_test, parallel_api_test

    env = make()
    test = api_test if report.kind == "AECAdapter" else parallel_api_test
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            test(env, num_cycles=100)
    except Exception as exc:
        message = " ".join(str(exc).split())[:MESSAGE_CHARS] or "(no message)"
        report.add("pettingzoo api_test", f"{test.__name__} failed with "
                   f"{type(exc).__name__}: {message}")
    else:
        report.add("pettingzoo api_test", None, f"{test.__name__} passed")
    finally:
        _close(env)


def _play(game: MultiAgentEnv, steps: int, seed: int, report: Report) -> None:
    """Random legal games for ``steps`` turns, every turn checked; records the play checks."""
    checker = ObsChecker(game.observation_space, env_label=report.script)
    start, progress = time.perf_counter(), {"turns": 0, "lengths": []}
    try:
        failed = _run_games(game, steps, seed, checker, progress)
    except Exception as exc:
        failed = ("env runs", f"turn {progress['turns']}: {type(exc).__name__}: {exc}")
    turns, lengths = progress["turns"], progress["lengths"]
    report.turns, report.games = turns, len(lengths)
    report.steps_per_s = turns / max(time.perf_counter() - start, 1e-9)
    report.avg_length = float(np.mean(lengths)) if lengths else None
    for name in PLAY_CHECKS:
        problem = failed[1] if failed is not None and failed[0] == name else None
        report.add(name, problem, f"{turns} turns")


def _run_games(game: MultiAgentEnv, steps: int, seed: int, checker: ObsChecker,
               progress: dict[str, Any]) -> tuple[str, str] | None:
    """Play random legal games for ``steps`` turns; the first problem found, or None.

    ``progress`` counts ``turns`` and collects finished games' ``lengths`` as it goes.
    """
    rng = np.random.default_rng(seed)
    game.action_space.seed(seed)
    turn, length = game.reset(seed=seed), 0
    while (failed := _check_turn(turn, game, checker, progress["turns"])) is None:
        if turn.done:
            progress["lengths"].append(length)
            if progress["turns"] >= steps:
                return None
            turn, length = game.reset(), 0
        elif progress["turns"] >= steps:
            return None
        else:
            turn = game.step(_random_actions(turn, game, rng))
            progress["turns"], length = progress["turns"] + 1, length + 1
    return failed


def _check_turn(turn: Turn, game: MultiAgentEnv, checker: ObsChecker,
                step: int) -> tuple[str, str] | None:
    """(check, problem) of the first thing wrong with ``turn``; None when it is fine."""
    for name, check in (("seats to act", _seat_problem), ("observations", _obs_problem),
                        ("action masks", _mask_problem), ("rewards", _reward_problem)):
        problem = check(turn, game, checker, step)
        if problem is not None:
            return name, f"turn {step}: {problem}"
    return None


def _teams(game: MultiAgentEnv) -> tuple[str | None, str]:
    """A problem with the game's ``teams`` (or None), and how the league will seat it."""
    try:
        teams = teams_of(game)
    except ScriptError as exc:
        return str(exc), ""
    if getattr(game, "teams", None) is None:
        return None, "no teams: every seat is its own side"
    return None, f"{max(teams) + 1} sides, seat -> side {teams}"


def _seat_problem(turn: Turn, game: MultiAgentEnv, checker: ObsChecker, step: int) -> str | None:
    """Seats to act are distinct valid seats in order, with an observation each."""
    seats = len(game.seats)
    if turn.done and turn.to_act:
        return f"the game is over but seats {list(turn.to_act)} are to act"
    if not turn.done and not turn.to_act:
        return "the game is not over but no seat is to act"
    if list(turn.to_act) != sorted(set(turn.to_act)) or any(
            not (isinstance(s, int) and 0 <= s < seats) for s in turn.to_act):
        return f"to_act = {turn.to_act!r}; expected distinct seat indices in 0..{seats - 1}"
    if set(turn.obs) != set(turn.to_act):
        return f"observations for seats {sorted(turn.obs)}, but seats {list(turn.to_act)} act"
    return None


def _obs_problem(turn: Turn, game: MultiAgentEnv, checker: ObsChecker, step: int) -> str | None:
    """Every observation (and final observation) fits the observation space."""
    for seat, obs in [*turn.obs.items(), *turn.final_obs.items()]:
        try:
            checker.check_obs(np.expand_dims(np.asarray(obs), 0), step, env_ids=[0])
        except EnvDataError as exc:
            return f"seat {game.seats[seat]}: {exc}"
        space = game.observation_space
        if isinstance(space, gym.spaces.Box) and not space.contains(
                np.asarray(obs, dtype=space.dtype)):
            low, high = np.asarray(obs).min(), np.asarray(obs).max()
            return (f"seat {game.seats[seat]}: observation values in [{low}, {high}] lie "
                    f"outside the bounds of {space}")
    return None


def _mask_problem(turn: Turn, game: MultiAgentEnv, checker: ObsChecker, step: int) -> str | None:
    """Masks are bool arrays of the action count with a legal action each (for multi-discrete
    actions, each component's choices side by side, with a legal choice each)."""
    if turn.masks is None:
        return None
    nvec = multi_nvec(game.action_space)
    parts = None if nvec is None else np.cumsum(nvec)[:-1]
    size = getattr(game.action_space, "n", None) if nvec is None else int(np.sum(nvec))
    for seat, mask in turn.masks.items():
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.ndim != 1 or (size is not None and mask.shape[0] != size):
            return (f"seat {game.seats[seat]}: mask should be a bool [{size}] array, got "
                    f"shape {mask.shape} dtype {mask.dtype}")
        if not all(part.any() for part in ([mask] if parts is None else np.split(mask, parts))):
            return f"seat {game.seats[seat]} is to act but its mask allows no action"
    return None


def _reward_problem(turn: Turn, game: MultiAgentEnv, checker: ObsChecker,
                    step: int) -> str | None:
    """Rewards (and the score, when a wrapper set one) are ``[S]`` finite numbers."""
    named = [("rewards", turn.rewards)] + ([] if turn.score is None else [("score", turn.score)])
    for name, values in named:
        values = np.asarray(values)
        if values.shape != (len(game.seats),):
            return f"{name} should have shape ({len(game.seats)},), got {values.shape}"
        try:
            checker.check_rewards(values, step)
        except EnvDataError as exc:
            return f"{name}: {exc}"
    return None


def _random_actions(turn: Turn, game: MultiAgentEnv, rng: np.random.Generator) -> dict[int, Any]:
    """A random legal action for every seat to act."""
    masks = turn.masks or {}
    return {s: random_action(game.action_space, masks.get(s), rng) for s in turn.to_act}


def _close(env: Any) -> None:
    """Close an env, ignoring envs without close or that fail to close."""
    with contextlib.suppress(Exception):
        getattr(env, "close", lambda: None)()
