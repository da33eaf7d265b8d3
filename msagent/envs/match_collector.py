"""Plays K multi-seat games side by side with one batched act per step, and cuts the trainable
seats' experience into Fragments.

Each env slot plays the matches a ``MatchSource`` hands it, one per game. Every step, the seats
to act in all K games are grouped by the policy that plays them (a trainable player, a frozen
snapshot, a bot) and decided by one call of the act function, one forward pass per policy.
Every seat a trainable player holds is recorded (``msagent.envs.streams``), for that player's
learner, whichever side of the match it is on; finished games are kept
as ``EpisodeResult``s for the league. A Gymnasium env is the one-seat case of the same loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from msagent.envs.action_clip import box_bounds, clip_actions
from msagent.envs.checks import ObsChecker
from msagent.envs.collector import Acted
from msagent.envs.multi_agent import MultiAgentEnv, Turn, points
from msagent.errors import EnvDataError, MsagentError
from msagent.envs.streams import Stream
from msagent.envs.teams import seat_match, side_returns, teams_of
from msagent.vocabulary import PLAYER, EpisodeResult, Fragment, Match, ModelKey, PolicyRef

Group = tuple[np.ndarray, np.ndarray | None, np.ndarray | None]
"""The observations, legal-action masks (or None) and recurrent states (or None: fresh or
feed-forward) of every seat one policy plays this step."""
GroupActFn = Callable[[dict[PolicyRef, Group]], dict[PolicyRef, Acted]]
"""Decides every group of one step in one call (local policies or one inference request)."""
MatchSource = Callable[[int], Match]
"""The next match for env slot ``k``."""

MAX_FAILURES_IN_A_ROW = 3
"""Games of one slot that may break off in a row, on rebuilt envs, before the error is raised:
an env that cannot finish a game is broken, not flaky."""


class _Slot:
    """One env slot: its game, its current match and turn, the returns so far, and one stream
    per trainable player seated in it (keyed by player and occurrence, so a player keeps its
    stream across games whichever seat it gets, and self-play has two)."""

    def __init__(self, env: MultiAgentEnv, length: int) -> None:
        self.env, self.length = env, length
        self.teams = teams_of(env)
        self.side_match: Match | None = None  # what the league handed out: one ref per side
        self.match: Match | None = None  # one ref per seat
        self.turn: Turn | None = None
        self.returns = np.zeros(len(env.seats))
        self.steps = 0
        self.streams: dict[tuple[str, int], Stream] = {}
        self.seated: dict[int, Stream] = {}  # seat -> stream, for the current match
        self.states: dict[int, np.ndarray] = {}  # seat -> recurrent state before its next act
        self.after: dict[int, np.ndarray] = {}  # seat -> state after its pending decision
        self.last_key: ModelKey | None = None
        self.failures = 0  # games broken off by an env error since the last finished one

    def seat(self, match: Match) -> None:
        """Seat ``match``: every trainable player's seat gets its player's stream."""
        self.match, self.seated = match, {}
        seen: dict[str, int] = {}
        for seat, ref in enumerate(match.seats):
            if ref.kind == PLAYER:
                key = (ref.name, seen.get(ref.name, 0))
                seen[ref.name] = key[1] + 1
                if key not in self.streams:
                    self.streams[key] = Stream(self.length)
                self.seated[seat] = self.streams[key]


class MatchCollector:
    """Steps K games for ``length`` env steps per ``collect`` call and returns the Fragments
    completed meanwhile (each of ``length`` learner-seat decisions).

    The next actions are decided at the end of every step, so a
    Fragment's bootstrap value is known when ``collect`` returns and ``act_again`` can re-decide
    them with newer parameters (sync mode).

    Args:
        envs: K games (``msagent.envs.adapters.as_multi_agent``).
        act: Decides all groups of one step.
        matches: The next match of an env slot (asked at every game start).
        length: T, decisions per Fragment (and env steps per ``collect``).
        seed: Seed of the first reset of slot 0 (slot k: seed + k).
        checker: Checks every step's observations (one vectorized check per policy group)
            and rewards against the game's declared space; None checks nothing.
        remake: Builds a fresh game. Given, a game whose env raises (a crashed game engine)
            is broken off (not reported; its last decisions end as truncated) and its slot
            goes on with a fresh env (``take_env_errors`` tells); None: the error is raised.

    Raises:
        EnvDataError: a game returned an observation outside its space or a non-finite value.
    """

    def __init__(self, envs: Sequence[MultiAgentEnv], act: GroupActFn, matches: MatchSource,
                 length: int, seed: int, checker: ObsChecker | None = None,
                 remake: Callable[[], MultiAgentEnv] | None = None) -> None:
        self.act, self.matches, self.length = act, matches, length
        self.checker, self.remake = checker, remake
        self._bounds = box_bounds(envs[0].action_space)  # Box samples are clipped for the game
        self.env_errors: list[str] = []
        self.slots = [_Slot(env, length) for env in envs]
        self.results: list[EpisodeResult] = []
        self.steps = 0
        self._rewards = np.zeros((len(envs), max(len(e.seats) for e in envs)))
        for k, slot in enumerate(self.slots):
            self._start(k, slot, seed + k)
        self.pending = self._decide(record=True)

    def collect(self) -> list[Fragment]:
        """Play ``length`` steps in every game; the Fragments completed meanwhile."""
        for _ in range(self.length):
            self.steps += 1  # every game takes this step: their step number
            for k, slot in enumerate(self.slots):
                self._apply(k, slot, self.pending[k])
            self._check_rewards()
            self.pending = self._decide(record=True)
        return [f for slot in self.slots for stream in slot.streams.values()
                for f in stream.take()]

    def act_again(self) -> None:
        """Re-decide the pending actions (new parameters arrived), so that the next Fragment
        is acted by one version from its first step."""
        self.pending = self._decide(record=False)

    def take_results(self) -> list[EpisodeResult]:
        """The games finished since the last call."""
        done, self.results = self.results, []
        return done

    def take_env_errors(self) -> list[str]:
        """The env errors that broke games off since the last call, one line each."""
        errors, self.env_errors = self.env_errors, []
        return errors

    def _start(self, k: int, slot: _Slot, seed: int | None = None) -> None:
        """Begin a game in slot ``k`` with its next match."""
        slot.side_match = match = self.matches(k)
        slot.seat(seat_match(match, slot.teams))
        slot.states, slot.after = {}, {}  # recurrent memories start afresh with each game
        slot.turn = slot.env.reset(seed=seed)
        slot.returns[:], slot.steps = 0.0, 0

    def _decide(self, record: bool) -> list[dict[int, Any]]:
        """Actions of every seat to act, one act call; learner seats' decisions are recorded
        (``record``) or overwrite the open decision (re-deciding)."""
        groups, where = self._groups()
        acted = self.act(groups)
        actions: list[dict[int, Any]] = [{} for _ in self.slots]
        for ref, rows in where.items():
            out, key = acted[ref]
            obs, masks, states = groups[ref]
            # plain Python numbers: indexing lists costs a fraction of indexing numpy arrays
            acts = out.actions.tolist() if out.actions.ndim == 1 else out.actions
            given = acts if self._bounds is None else clip_actions(out.actions, self._bounds)
            logps, values = out.logp.tolist(), out.values.tolist()
            before = _states_before(states, out.state)
            for i, (k, seat) in enumerate(rows):
                actions[k][seat] = given[i]
                slot = self.slots[k]
                if out.state is not None:
                    slot.after[seat] = out.state[i]
                stream = slot.seated.get(seat)
                if stream is not None:
                    decide = stream.decide if record else stream.redecide
                    decide(obs[i], acts[i], logps[i], values[i],
                           None if masks is None else masks[i], key,
                           None if before is None else before[i])
                    if seat == slot.match.learner_seat:
                        slot.last_key = key
        return actions

    def _groups(self) -> tuple[dict[PolicyRef, Group], dict[PolicyRef, list[tuple[int, int]]]]:
        """The seats to act in all games, grouped by the policy that plays them."""
        obs: dict[PolicyRef, list] = {}
        masks: dict[PolicyRef, list] = {}
        states: dict[PolicyRef, list] = {}
        where: dict[PolicyRef, list[tuple[int, int]]] = {}
        for k, slot in enumerate(self.slots):
            turn = slot.turn
            for seat in turn.to_act:
                ref = slot.match.seats[seat]
                where.setdefault(ref, []).append((k, seat))
                obs.setdefault(ref, []).append(turn.obs[seat])
                masks.setdefault(ref, []).append(None if turn.masks is None else turn.masks[seat])
                states.setdefault(ref, []).append(slot.states.get(seat))
        groups = {ref: (self._stack(obs[ref], where[ref]), _stack_masks(masks[ref]),
                        stack_states(states[ref])) for ref in where}
        if self.checker is not None:
            for ref, rows in where.items():
                self._check(groups[ref][0], obs[ref], rows)
        return groups, where

    def _check(self, batch: np.ndarray, rows: list[Any], where: list[tuple[int, int]]) -> None:
        """One vectorized check of a group's observations; a failure is told for the first
        offending game alone (its declared and actual shape, dtype or value)."""
        try:
            self.checker.check_obs(batch, self.steps, env_ids=[k for k, _ in where])
        except EnvDataError as exc:
            raise (self._explain(rows, where) or exc) from None

    def _explain(self, rows: list[Any], where: list[tuple[int, int]]) -> EnvDataError | None:
        """The checker's per-game explanation of rows that broke a group, or None."""
        by_env = {k: row for (k, _), row in zip(where, rows, strict=True)}
        ok = next(iter(by_env.values()))
        return self.checker.explain([by_env.get(k, ok) for k in range(len(self.slots))],
                                    self.steps)

    def _check_rewards(self) -> None:
        """Every game's rewards of this step, one vectorized check per seat."""
        if self.checker is not None:
            for seat in range(self._rewards.shape[1]):
                self.checker.check_rewards(self._rewards[:, seat], self.steps)

    def _stack(self, rows: list[Any], where: list[tuple[int, int]]) -> np.ndarray:
        """One group's observations as a batch; rows that cannot stack are explained by the
        checker (naming the game, the step and the declared and actual shapes)."""
        try:
            return np.stack(rows)
        except (TypeError, ValueError) as exc:
            error = None if self.checker is None else self._explain(rows, where)
            if error is not None:
                raise error from exc
            raise

    def _apply(self, k: int, slot: _Slot, actions: dict[int, Any]) -> None:
        """Step one game; credit rewards; on its end report it and start the next match."""
        try:
            turn = slot.env.step(actions)
        except Exception as exc:
            self._break_off(k, slot, exc)
            return
        slot.turn, slot.steps = turn, slot.steps + 1
        for seat in actions:  # the acted seats' memories move on
            if seat in slot.after:
                slot.states[seat] = slot.after.pop(seat)
        rewards = turn.rewards
        self._rewards[k] = rewards
        slot.returns += points(turn)
        for seat, stream in slot.seated.items():
            stream.reward(rewards[seat])
        if turn.done:
            for seat, stream in slot.seated.items():
                stream.end(turn.terminated, self._final_value(k, slot, seat, turn))
            self.results.append(_result(slot))
            slot.failures = 0
            try:
                self._start(k, slot)
            except Exception as exc:
                self._break_off(k, slot, exc)

    def _break_off(self, k: int, slot: _Slot, exc: Exception) -> None:
        """The env of slot ``k`` raised: drop its game and go on with a fresh env; raise when
        that is not allowed, the error is msagent's own (bad data, an illegal action), or the
        slot's envs keep failing."""
        slot.failures += 1
        if self.remake is None or isinstance(exc, MsagentError) or \
                slot.failures > MAX_FAILURES_IN_A_ROW:
            raise exc
        self.env_errors.append(f"game {k} broke off at its step {slot.steps + 1}: "
                               f"{type(exc).__name__}: {exc}")
        for stream in slot.seated.values():
            stream.break_off()
        self._rewards[k] = 0.0
        with contextlib.suppress(Exception):  # the broken env may not close cleanly either
            slot.env.close()
        slot.env = self.remake()
        self._start(k, slot)

    def _final_value(self, k: int, slot: _Slot, seat: int, turn: Turn) -> float:
        """V(last observation) of a trainable seat of a truncated game (0 when terminated)."""
        if not turn.truncated or seat not in turn.final_obs:
            return 0.0
        ref, final = slot.match.seats[seat], np.asarray(turn.final_obs[seat])[None]
        if self.checker is not None:
            self.checker.check_obs(final, self.steps, env_ids=[k],
                                   what="final observation")
        state = slot.states.get(seat)
        acted = self.act({ref: (final, None, None if state is None else state[None])})[ref]
        return float(acted.out.values[0])


def stack_states(states: list[np.ndarray | None]) -> np.ndarray | None:
    """One group's recurrent states as a batch, zeros for fresh seats; None when all are
    fresh (a feed-forward policy never has any)."""
    known = next((s for s in states if s is not None), None)
    if known is None:
        return None
    return np.stack([np.zeros_like(known) if s is None else s for s in states])


def _states_before(states: np.ndarray | None, after: np.ndarray | None) -> np.ndarray | None:
    """The states a recurrent group acted from (zeros where fresh); None if feed-forward."""
    if after is None:
        return None
    return np.zeros_like(after) if states is None else states


def _stack_masks(masks: list[np.ndarray | None]) -> np.ndarray | None:
    """Stack the masks of one group (None when the game gives none)."""
    return None if masks[0] is None else np.stack(masks)


def _result(slot: _Slot) -> EpisodeResult:
    """The EpisodeResult of slot's finished game, from its learner side's point of view."""
    match, returns = slot.side_match, side_returns(slot.returns, slot.teams)
    seat = match.learner_seat
    outcome = None
    if len(returns) > 1:
        best_other = max(r for i, r in enumerate(returns) if i != seat)
        outcome = float(np.sign(returns[seat] - best_other))
    key = slot.last_key or ModelKey(match.learner.name, match.learner.version)
    return EpisodeResult(float(returns[seat]), slot.steps, key, outcome=outcome,
                         match=match, seat_returns=tuple(float(r) for r in returns))
