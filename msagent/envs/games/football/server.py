"""The child side of ``FootballEnv``: one gfootball env served over stdin/stdout frames.

Run as a script by the football virtual environment's Python (``.venv-football/bin/python
server.py``); it imports only gfootball, numpy, msgpack and the standard library (``wire`` sits
beside it). Requests and replies are msgpack maps (``wire.py``):

- ``{"cmd": "make", "scenario", "representation", "rewards", "left", "right", "options"}``
  -> ``{"seats": S}``
- ``{"cmd": "reset", "seed": int | None}`` -> ``{"obs": [S, ...] array}``
- ``{"cmd": "step", "actions": [S ints]}`` -> ``{"obs", "rewards": [S], "done", "truncated"}``
- anything failing -> ``{"error": message, "kind": "config" | "runtime"}``

Observations are from each controlled player's point of view (gfootball mirrors the right
side's). The child exits when its stdin closes (the parent closed it or died).
"""

from __future__ import annotations

import os
import pkgutil
import random
import signal
import sys
import traceback
from typing import Any

import numpy as np

from wire import PipeClosed, read_frame, write_frame


class ConfigProblem(ValueError):
    """A request the parent got wrong (an unknown scenario, a bad player count)."""


def scenarios() -> list[str]:
    """The names of gfootball's scenarios."""
    from gfootball import scenarios as package

    return sorted(m.name for m in pkgutil.iter_modules(package.__path__)
                  if not m.name.startswith("_") and m.name != "tests")


class Server:
    """One gfootball env and the commands that drive it."""

    def __init__(self) -> None:
        self.env: Any = None
        self.seats = 0

    def make(self, msg: dict) -> dict:
        """Create the env the request describes."""
        try:
            known = scenarios()
        except ImportError as exc:
            raise ConfigProblem(f"{sys.executable} cannot import gfootball ({exc}); run `bash "
                                f"scripts/setup_football.sh`") from exc
        if msg["scenario"] not in known:
            raise ConfigProblem(f"unknown gfootball scenario {msg['scenario']!r}; valid "
                                f"scenarios: {', '.join(known)}")
        import gfootball.env as football_env

        self.seats = int(msg["left"]) + int(msg["right"])
        self.env = football_env.create_environment(
            env_name=msg["scenario"], representation=msg["representation"],
            rewards=msg["rewards"], number_of_left_players_agent_controls=int(msg["left"]),
            number_of_right_players_agent_controls=int(msg["right"]),
            other_config_options=dict(msg.get("options") or {}))
        return {"seats": self.seats}

    def reset(self, msg: dict) -> dict:
        """Start an episode (seeding the engine's draw of its random seed when asked)."""
        if msg.get("seed") is not None:
            random.seed(int(msg["seed"]))
            np.random.seed(int(msg["seed"]) % 2**32)
        return {"obs": self._per_seat(self.env.reset())}

    def step(self, msg: dict) -> dict:
        """One step with every controlled player's action."""
        actions = [int(a) for a in msg["actions"]]
        if len(actions) != self.seats:
            raise ConfigProblem(f"{len(actions)} actions for {self.seats} controlled players")
        obs, reward, done, info = self.env.step(actions if self.seats > 1 else actions[0])
        rewards = np.atleast_1d(np.asarray(reward, dtype=np.float64))
        truncated = bool(done) and self._out_of_time() and info.get("score_reward", 0) == 0
        return {"obs": self._per_seat(obs), "rewards": rewards, "done": bool(done),
                "truncated": truncated}

    def _out_of_time(self) -> bool:
        """Whether the episode used up its ``game_duration`` steps."""
        raw = self.env.unwrapped.observation()
        return int(raw[0]["steps_left"]) <= 0

    def _per_seat(self, obs: Any) -> np.ndarray:
        """Observations stacked ``[S, ...]`` (gfootball drops the axis for one player)."""
        array = np.asarray(obs)
        return array[None] if self.seats == 1 else array

    def handle(self, msg: dict) -> dict:
        """The reply to one request."""
        cmd = msg.get("cmd")
        if cmd == "make":
            return self.make(msg)
        if self.env is None:
            raise ConfigProblem(f"{cmd!r} before 'make'")
        if cmd == "reset":
            return self.reset(msg)
        if cmd == "step":
            return self.step(msg)
        raise ConfigProblem(f"unknown command {cmd!r}")


def main() -> int:
    """Serve requests until stdin closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the child ends
    out = os.dup(1)
    os.dup2(2, 1)  # stray prints (pygame's greeting, the engine) go to stderr, not the pipe
    sys.stdout = sys.stderr
    server = Server()
    while True:
        try:
            msg = read_frame(0)
        except PipeClosed:
            return 0
        try:
            reply = server.handle(msg)
        except ConfigProblem as exc:
            reply = {"error": str(exc), "kind": "config"}
        except Exception as exc:  # noqa: BLE001 - told to the parent, which raises it
            traceback.print_exc()
            reply = {"error": f"{type(exc).__name__}: {exc}", "kind": "runtime"}
        write_frame(out, reply)


if __name__ == "__main__":
    sys.exit(main())
