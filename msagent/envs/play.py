"""Pure game loops (no Ray): whole games between seat actors, and win/draw/loss tallies.

Used by the evaluator, ``msagent validate-env`` and the tests. A :data:`SeatActor` takes a
batch of observations (and masks) of the seats it plays at this turn and returns one action
per row; a :class:`msagent.envs.bots.Bot` is one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from msagent.envs.action_clip import Bounds, box_bounds, clip_actions
from msagent.envs.multi_agent import MultiAgentEnv, Turn, points
from msagent.errors import ConfigError

SeatActor = Callable[[np.ndarray, "np.ndarray | None"], np.ndarray]
"""``actor(obs_batch, mask_batch_or_None) -> actions``, one row per seat it plays."""

Z_95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval."""


@dataclass(frozen=True)
class GameRecord:
    """One finished game.

    Attributes:
        seat_actors: the index of the actor in each seat (seat order).
        returns: each actor's return (actor order).
        outcomes: each actor's +1 (win) / 0 (draw) / -1 (loss), by comparing returns.
        length: turns played.
    """

    seat_actors: tuple[int, ...]
    returns: tuple[float, ...]
    outcomes: tuple[int, ...]
    length: int

    def seat_of(self, actor: int) -> int:
        """The seat ``actor`` played."""
        return self.seat_actors.index(actor)


@dataclass(frozen=True)
class WinDrawLoss:
    """Win/draw/loss counts of one actor, with a per-seat breakdown (``by_seat[s]``)."""

    wins: int
    draws: int
    losses: int
    by_seat: tuple[WinDrawLoss, ...] = ()

    @property
    def games(self) -> int:
        """Games counted."""
        return self.wins + self.draws + self.losses

    @property
    def win_rate(self) -> float:
        """Wins per game (0 when no game was played)."""
        return self.wins / self.games if self.games else 0.0

    @property
    def draw_rate(self) -> float:
        """Draws per game."""
        return self.draws / self.games if self.games else 0.0

    @property
    def loss_rate(self) -> float:
        """Losses per game."""
        return self.losses / self.games if self.games else 0.0

    @property
    def win_interval(self) -> tuple[float, float]:
        """Wilson 95% confidence interval of the win rate."""
        return wilson_interval(self.wins, self.games)


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a success rate; (0, 1) without trials."""
    if trials == 0:
        return 0.0, 1.0
    p, zz = successes / trials, z * z
    center = (p + zz / (2 * trials)) / (1 + zz / trials)
    half = z * math.sqrt(p * (1 - p) / trials + zz / (4 * trials * trials)) / (1 + zz / trials)
    return max(0.0, center - half), min(1.0, center + half)


def play_games(make_env: Callable[[], MultiAgentEnv], actors: Sequence[SeatActor], games: int,
               seed: int, rotate: bool = True) -> list[GameRecord]:
    """Play ``games`` whole games, game ``g`` reset with ``seed + g``; with ``rotate`` the
    actors move one seat on each game, so each plays every seat equally often.

    Raises:
        ConfigError: the number of actors is not the number of seats.
    """
    env = make_env()
    try:
        if len(actors) != len(env.seats):
            raise ConfigError(f"play_games needs one actor per seat: the game has "
                              f"{len(env.seats)} seats {list(env.seats)}, got {len(actors)} actors")
        return [play_game(env, actors, seating(g, len(actors), rotate), seed + g)
                for g in range(games)]
    finally:
        env.close()


def seating(game: int, seats: int, rotate: bool = True) -> tuple[int, ...]:
    """The actor of each seat in game ``game``: actor ``(s + game) % seats`` when rotating."""
    shift = game % seats if rotate else 0
    return tuple((s + shift) % seats for s in range(seats))


def play_game(env: MultiAgentEnv, actors: Sequence[SeatActor], seat_actors: Sequence[int],
              seed: int | None) -> GameRecord:
    """Play one game with ``actors[seat_actors[s]]`` in seat ``s``."""
    for index, actor in enumerate(actors):
        getattr(actor, "reset", lambda: None)()
        if hasattr(actor, "take_seat") and index in seat_actors:  # a mixture draws its member
            actor.take_seat(list(seat_actors).index(index))
    turn = env.reset(seed=seed)
    totals, length, bounds = points(turn), 0, box_bounds(env.action_space)
    while not turn.done:
        turn = env.step(choose(turn, actors, seat_actors, bounds))
        totals += points(turn)
        length += 1
    returns = [0.0] * len(actors)
    for seat, actor in enumerate(seat_actors):
        returns[actor] = float(totals[seat])
    return GameRecord(tuple(seat_actors), tuple(returns), outcomes(returns), length)


def choose(turn: Turn, actors: Sequence[SeatActor], seat_actors: Sequence[int],
           bounds: Bounds | None = None) -> dict[int, Any]:
    """Seat -> action of every seat to act, one batched call per actor; continuous (Box)
    actions are clipped to ``bounds`` for the game, as in training."""
    actions: dict[int, Any] = {}
    for actor in sorted({seat_actors[s] for s in turn.to_act}):
        seats = [s for s in turn.to_act if seat_actors[s] == actor]
        obs = np.stack([turn.obs[s] for s in seats])
        masks = None if turn.masks is None else np.stack([turn.masks[s] for s in seats])
        chosen = clip_actions(np.asarray(actors[actor](obs, masks)), bounds)
        if bounds is None:  # discrete: one integer per seat
            chosen = chosen.reshape(len(seats), -1)
        for seat, action in zip(seats, chosen):
            actions[seat] = action.item() if bounds is None and action.size == 1 else action
    return actions


def outcomes(returns: Sequence[float]) -> tuple[int, ...]:
    """+1 for a return above every other, -1 below the best other, 0 for a tie (or alone)."""
    result = []
    for i, mine in enumerate(returns):
        others = [r for j, r in enumerate(returns) if j != i]
        best = max(others) if others else mine
        result.append(1 if mine > best else -1 if mine < best else 0)
    return tuple(result)


def wdl(records: Sequence[GameRecord], actor_index: int) -> WinDrawLoss:
    """Actor ``actor_index``'s wins, draws and losses, overall and per seat."""
    seats = len(records[0].seat_actors) if records else 0
    counts = np.zeros((seats, 3), dtype=np.int64)
    for record in records:
        counts[record.seat_of(actor_index), 1 - record.outcomes[actor_index]] += 1
    by_seat = tuple(WinDrawLoss(*map(int, row)) for row in counts)
    wins, draws, losses = (int(x) for x in counts.sum(axis=0)) if seats else (0, 0, 0)
    return WinDrawLoss(wins, draws, losses, by_seat)
