"""A fixed number of whole games of one seating, side by side with batched acting (no
fragments): what PSRO's meta-game evaluation plays for one entry."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from msagent.envs.action_clip import Bounds, box_bounds, clip_actions
from msagent.envs.match_collector import Group, GroupActFn, stack_states
from msagent.envs.multi_agent import MultiAgentEnv, Turn, points
from msagent.vocabulary import PolicyRef


def play_seating(envs: Sequence[MultiAgentEnv], act: GroupActFn, seats: Sequence[PolicyRef],
                 games: int, seed: int) -> list[list[float]]:
    """Play ``games`` games with ``seats[s]`` in seat ``s``; each game's return per seat.

    Game ``g`` is reset with ``seed + g``; at each step the seats to act in all running games
    are grouped by policy and decided by one ``act`` call.
    """
    started, out = 0, []
    running: dict[int, tuple[Turn, np.ndarray]] = {}
    memory: dict[tuple[int, int], np.ndarray] = {}  # (env, seat) -> recurrent state
    for k in range(min(games, len(envs))):
        turn = envs[k].reset(seed=seed + started)
        running[k], started = (turn, points(turn)), started + 1
    while running:
        actions = _decide(running, act, seats, memory, box_bounds(envs[0].action_space))
        for k, chosen in actions.items():
            turn = envs[k].step(chosen)
            totals = running[k][1] + points(turn)
            running[k] = (turn, totals)
        for k in [k for k, (turn, _) in running.items() if turn.done]:
            out.append(running.pop(k)[1].tolist())
            for cell in [c for c in memory if c[0] == k]:
                del memory[cell]
            if started < games:
                turn = envs[k].reset(seed=seed + started)
                running[k], started = (turn, points(turn)), started + 1
    return out


def _decide(running: dict[int, tuple[Turn, np.ndarray]], act: GroupActFn,
            seats: Sequence[PolicyRef], memory: dict[tuple[int, int], np.ndarray],
            bounds: Bounds | None = None) -> dict[int, dict[int, int]]:
    """Env -> seat -> action for every seat to act, one group per policy; recurrent states
    in ``memory`` move on."""
    where: dict[PolicyRef, list[tuple[int, int]]] = {}
    for k, (turn, _) in running.items():
        for s in turn.to_act:
            where.setdefault(seats[s], []).append((k, s))
    groups: dict[PolicyRef, Group] = {}
    for ref, cells in where.items():
        obs = np.stack([running[k][0].obs[s] for k, s in cells])
        masks = None if running[cells[0][0]][0].masks is None else np.stack(
            [running[k][0].masks[s] for k, s in cells])
        groups[ref] = (obs, masks, stack_states([memory.get(cell) for cell in cells]))
    decided = act(groups)
    actions: dict[int, dict[int, int]] = {}
    for ref, cells in where.items():
        out = decided[ref].out
        chosen = clip_actions(out.actions, bounds)  # Box samples, clipped for the game
        for i, ((k, s), a) in enumerate(zip(cells, chosen)):
            actions.setdefault(k, {})[s] = a.item() if np.ndim(a) == 0 else a
            if out.state is not None:
                memory[(k, s)] = out.state[i]
    return actions
