"""An OpenSpiel game (a ``pyspiel.Game``) as a multi-seat game.

Chance nodes are resolved inside with the adapter's own seeded RNG; observations are the
information-state tensor when the game provides one, else the observation tensor; rewards are
the deltas of ``state.returns()``; simultaneous nodes let every seat with a legal action act.
Nothing here imports pyspiel: the adapter only calls the game's and the state's methods.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from msagent.envs.adapters.base import check_action, check_seats, mask_of, seat_names
from msagent.envs.multi_agent import Turn
from msagent.errors import ScriptError

INVALID_ACTION = -1
"""What a seat without a legal action plays at a simultaneous node (``pyspiel.INVALID_ACTION``)."""


class OpenSpielAdapter:
    """A ``pyspiel.Game`` as a :class:`~msagent.envs.multi_agent.MultiAgentEnv`.

    Args:
        game: The OpenSpiel game.
        label: Its name in error messages (default: the game's short name).
        privileged: Each seat's observation is its own information-state tensor followed by
            every other seat's, in seat order: hidden information for a critic alone, to be
            cut off the actor's input (``NetworkConfig(actor_inputs=own_size)``, where
            ``own_size`` is :attr:`own_size`). Games with flat information-state tensors only.
    """

    def __init__(self, game: Any, label: str = "", privileged: bool = False) -> None:
        self.game = game
        self.label = label or game.get_type().short_name
        self.seats = seat_names(game.num_players())
        self._num_actions = int(game.num_distinct_actions())
        self._info_state = bool(game.get_type().provides_information_state_tensor)
        shape = self._tensor_shape(game)
        self.own_size = int(np.prod(shape))
        """Features of the seat's own tensor (the whole observation unless ``privileged``)."""
        self.privileged = privileged
        if privileged:
            if not self._info_state or len(shape) != 1:
                has = f"shape {tuple(shape)}" if self._info_state else "none"
                raise ScriptError(f"{self.label}: privileged observations need a flat "
                                  f"information-state tensor, the game has {has}")
            shape = (self.own_size * len(self.seats),)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, tuple(shape), np.float32)
        self.action_space = gym.spaces.Discrete(self._num_actions)
        self._rng = np.random.default_rng()
        self._state: Any = None
        self._to_act: tuple[int, ...] = ()
        self._masks: dict[int, np.ndarray] = {}

    def _tensor_shape(self, game: Any) -> list[int]:
        """The shape of what a seat observes: the information-state tensor, else the
        observation tensor; a game that implements neither is refused, naming it."""
        try:
            return (game.information_state_tensor_shape() if self._info_state
                    else game.observation_tensor_shape())
        except Exception as exc:  # pyspiel.SpielError: "... unimplemented"
            raise ScriptError(f"{self.label}: OpenSpiel's {game.get_type().short_name} "
                              "implements neither an "
                              "information-state tensor nor an observation tensor (OpenSpiel: "
                              f"{exc}), so a policy has nothing to observe; msagent plays "
                              "OpenSpiel games through one of them") from None

    def reset(self, seed: int | None = None) -> Turn:
        """A new game (chance nodes resolved); the first seats to act."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._state = self.game.new_initial_state()
        self._returns = np.zeros(len(self.seats))
        return self._advance()

    def step(self, actions: dict[int, Any]) -> Turn:
        """Apply the acting seats' actions (refused before the state sees them if illegal)."""
        check_seats(self.label, self._to_act, actions, self.seats)
        chosen = {s: check_action(self.label, self.seats[s], actions[s], self._masks[s])
                  for s in self._to_act}
        state = self._state
        if state.is_simultaneous_node():
            joint = [chosen.get(p, INVALID_ACTION) for p in range(len(self.seats))]
            state.apply_actions(joint)
        else:
            state.apply_action(chosen[self._to_act[0]])
        return self._advance()

    def close(self) -> None:
        """Nothing to release."""

    def _advance(self) -> Turn:
        """Resolve chance nodes, then the Turn of the seats to act (or the last Turn)."""
        state = self._state
        while state.is_chance_node():
            state.apply_action(self._sample_chance(state.chance_outcomes()))
        returns = np.asarray(state.returns(), dtype=np.float64)
        rewards, self._returns = returns - self._returns, returns
        if state.is_terminal():
            self._to_act, self._masks = (), {}
            return Turn((), {}, None, rewards, terminated=True)
        self._masks = self._legal_masks(state)
        self._to_act = tuple(self._masks)
        obs = {p: self.observe(state, p) for p in self._to_act}
        return Turn(self._to_act, obs, self._masks, rewards)

    def _legal_masks(self, state: Any) -> dict[int, np.ndarray]:
        """Seat -> mask of every seat to act (all seats with a move at simultaneous nodes)."""
        if state.is_simultaneous_node():
            players = range(len(self.seats))
        else:
            players = (state.current_player(),)
        masks = {}
        for p in players:
            legal = state.legal_actions(p)
            if legal:
                masks[p] = mask_of(legal, self._num_actions)
        return masks

    def observe(self, state: Any, player: int) -> np.ndarray:
        """The player's information-state (or observation) tensor as float32 (what the seat
        sees; also used to turn a policy into a table over information states), then the
        other seats' when ``privileged``."""
        if self.privileged:
            order = [player] + [p for p in range(len(self.seats)) if p != player]
            return np.concatenate([np.asarray(state.information_state_tensor(p), np.float32)
                                   for p in order])
        tensor = (state.information_state_tensor(player) if self._info_state
                  else state.observation_tensor(player))
        return np.asarray(tensor, dtype=np.float32).reshape(self.observation_space.shape)

    def _sample_chance(self, outcomes: list[tuple[int, float]]) -> int:
        """One chance outcome drawn by its probability with the adapter's RNG."""
        cumulative = np.cumsum([p for _, p in outcomes])
        index = int(np.searchsorted(cumulative, self._rng.random() * cumulative[-1], "right"))
        return outcomes[min(index, len(outcomes) - 1)][0]
