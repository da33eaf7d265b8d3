"""DareFightingICE as an msagent game: two seats (P1, P2) fighting one game of ``rounds``
rounds, driven frame by frame over the game's socket protocol.

A seat is asked for an action when its previous action's keys are all sent, at least
``frame_skip`` frames have passed since its last decision, and its fighter can act (the
game's ``control`` flag); the other seat's keys go on meanwhile, so a turn names one seat or
both. Walking, crouching and guarding are held until the seat's next decision. Observations
use the frame data without the game's 15-frame delay. Rewards are changes of the HP
difference, divided by the starting HP (zero-sum); a game's returns sum to its HP difference
at the end of each round, so the winner is the seat with more HP left. If the server dies or
hangs, the game in progress ends as truncated and the next ``reset`` starts a fresh server.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from msagent.envs.adapters.base import check_action, check_seats
from msagent.envs.games.fightingice import actions as A
from msagent.envs.games.fightingice.features import OBS_SIZE, observe
from msagent.envs.games.fightingice.launcher import (
    GameProcess,
    fake_command,
    game_home,
    java_command,
)
from msagent.envs.games.fightingice.protocol import (
    FLAG_GAME_END,
    FLAG_INITIALIZE,
    FLAG_PROCESSING,
    FLAG_ROUND_END,
)
from msagent.envs.games.fightingice.session import GameSession, is_connection_error
from msagent.envs.multi_agent import Turn
from msagent.errors import ConfigError

AIR_STATE = 2
"""``GrpcState.AIR_STATE``."""

RESET_ATTEMPTS = 3
"""How many fresh servers ``reset`` tries before giving up."""

NO_KEYS: frozenset[str] = frozenset()


class FightingICEEnv:
    """DareFightingICE (or its fake server) speaking msagent's multi-seat protocol."""

    seats = ("P1", "P2")

    def __init__(self, home: str | None = None, *, fake: bool = False, character: str = "ZEN",
                 rounds: int = 1, hp: int = 400, round_frames: int = 3600, frame_skip: int = 4,
                 port: int | None = None, timeout_s: float = 30.0) -> None:
        """A game served from ``home`` (default ``$FIGHTINGICE_HOME``), or by the fake server.

        Raises:
            ConfigError: bad settings, or (real game) ``FIGHTINGICE_HOME`` unset or not built,
                or no java.
        """
        if rounds < 1 or hp < 1 or round_frames < 2 or frame_skip < 1:
            raise ConfigError(f"FightingICEEnv needs rounds, hp, frame_skip >= 1 and "
                              f"round_frames >= 2; got rounds={rounds} hp={hp} "
                              f"round_frames={round_frames} frame_skip={frame_skip}")
        self.character, self.hp, self.round_frames = character, hp, round_frames
        self.frame_skip, self.timeout_s = frame_skip, timeout_s
        options = ["--limithp", str(hp), str(hp), "-r", str(rounds), "-f", str(round_frames)]
        if fake:
            self.process = GameProcess(fake_command(options), None, port)
        else:
            root = game_home(home, character)
            self.process = GameProcess(java_command(root, options), root / "data", port)
        self.observation_space = gym.spaces.Box(-10.0, 10.0, (OBS_SIZE,), np.float32)
        self.action_space = gym.spaces.Discrete(len(A.ACTIONS))
        self.round_results: list[tuple[int, int]] = []
        """Each finished round's remaining HP (P1, P2), across games."""
        self.restarts = 0
        """How many times a dead or hung server was replaced."""
        self._session: GameSession | None = None
        self._finished = True
        self._last_obs: dict[int, np.ndarray] = {}

    def reset(self, seed: int | None = None) -> Turn:
        """Start a new game (a fresh server first if it died); the first turn."""
        for attempt in range(RESET_ATTEMPTS):
            try:
                self._close_session()
                if not self.process.alive():
                    if self.process.starts:
                        self.restarts += 1
                    self.process.start()
                self._session = GameSession(self.process.port, (self.character,) * 2,
                                            self.seats, self.timeout_s)
                self._finished = False
                self._new_round()
                return self._advance(np.zeros(2))
            except Exception as exc:  # noqa: BLE001 (only the server's failures are retried)
                if not is_connection_error(exc) or attempt == RESET_ATTEMPTS - 1:
                    raise
                self._drop_server()
        raise AssertionError("unreachable")

    def step(self, actions: dict[int, Any]) -> Turn:
        """Send the seats' actions and play frames until a seat is to act or the game ends."""
        check_seats("fightingice", self._to_act, actions, self.seats)
        for seat, action in actions.items():
            index = check_action("fightingice", self.seats[seat], action,
                                 self._masks[seat], self.action_space)
            facing_right = self._frame.character_data[seat].front
            self._queue[seat] = A.key_frames(index, facing_right)
            self._held[seat] = self._queue[seat][-1] if A.held(index) else NO_KEYS
            self._since[seat] = 0
        try:
            self._reply()
            return self._advance(np.zeros(2))
        except Exception as exc:  # noqa: BLE001
            if not is_connection_error(exc):
                raise
            self._drop_server()
            self._to_act = ()
            return Turn((), {}, None, np.zeros(2), truncated=True,
                        final_obs=dict(self._last_obs))

    def close(self) -> None:
        """End the game and stop the server."""
        if self._session is not None:
            self._session.close()
            self._session = None
        self.process.stop()

    def _new_round(self) -> None:
        """Per-round state: full HP, no keys queued, both seats free to act."""
        self._hp = np.array([self.hp, self.hp], dtype=np.float64)
        self._queue: list[list[frozenset[str]]] = [[], []]
        self._held = [NO_KEYS, NO_KEYS]
        self._since = [self.frame_skip - 1, self.frame_skip - 1]
        self._to_act: tuple[int, ...] = ()
        self._masks: dict[int, np.ndarray] = {}

    def _advance(self, rewards: np.ndarray) -> Turn:
        """Frames until a seat is to act (the turn) or the game's end (the last turn)."""
        while True:
            states = self._session.receive()
            flag = states[0].state_flag
            if flag == FLAG_PROCESSING:
                frame = (states[0].non_delay_frame_data
                         if states[0].HasField("non_delay_frame_data") else states[0].frame_data)
                if len(frame.character_data) < 2:  # no fight yet (an empty frame)
                    self._session.reply((NO_KEYS, NO_KEYS))
                    continue
                self._credit(rewards, [c.hp for c in frame.character_data])
                self._frame = frame
                self._since = [s + 1 for s in self._since]
                ready = tuple(s for s in (0, 1) if not self._queue[s]
                              and self._since[s] >= self.frame_skip
                              and frame.character_data[s].control)
                if ready:
                    return self._turn(ready, rewards)
                self._reply()
            elif flag in (FLAG_ROUND_END, FLAG_GAME_END):
                left = list(states[0].round_result.remaining_hps)
                self._credit(rewards, left)
                self.round_results.append((int(left[0]), int(left[1])))
                if flag == FLAG_GAME_END:
                    self._finished, self._to_act = True, ()
                    return Turn((), {}, None, rewards, terminated=True)
                self._new_round()
            elif flag != FLAG_INITIALIZE:
                raise ConnectionError(f"unexpected state flag {flag} from the game")

    def _credit(self, rewards: np.ndarray, hps: list[int]) -> None:
        """Add the change of the HP difference to both seats' rewards (zero-sum)."""
        now = np.asarray(hps[:2], dtype=np.float64)
        change = ((now[0] - self._hp[0]) - (now[1] - self._hp[1])) / self.hp
        rewards += (change, -change)
        self._hp = now

    def _turn(self, ready: tuple[int, ...], rewards: np.ndarray) -> Turn:
        """The turn asking ``ready`` seats to act on the current frame."""
        self._last_obs = {s: observe(self._frame, s, self.hp, self.round_frames) for s in (0, 1)}
        self._to_act = ready
        self._masks = {s: A.legal_mask(self._frame.character_data[s].state == AIR_STATE)
                       for s in ready}
        return Turn(ready, {s: self._last_obs[s] for s in ready}, dict(self._masks), rewards)

    def _reply(self) -> None:
        """Each seat's keys for the current frame: its queue, else its held key."""
        keys = []
        for seat in (0, 1):
            queue = self._queue[seat]
            keys.append(queue.pop(0) if queue else self._held[seat])
        self._session.reply((keys[0], keys[1]))

    def _close_session(self) -> None:
        """Close the previous game: wait for its end, or leave it to the server."""
        if self._session is None:
            return
        session, self._session = self._session, None
        if self._finished:
            session.finish()
        else:
            session.abandon()

    def _drop_server(self) -> None:
        """Forget the game and kill the server (dead or hung): ``reset`` starts a new one."""
        if self._session is not None:
            self._session.close()
            self._session = None
        self.process.kill()
