"""The league coordinator: matches, results, snapshots and resets, as a pure state machine.

Calling loop (a learner per trainable player, env workers playing matches)::

    order = league.on_update(pid, updates)           # also once with updates=0 at start
    if order.snapshot:
        key = model_pool.push(pid, weights)            # -> ModelKey
        order = league.add_snapshot(pid, key, updates)
        if order.reset_to: load the weights of order.reset_to.key
    match = league.next_match(pid)                     # env worker seats the match
    league.report(episode_result)                      # when the episode ends
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from msagent.league.payoff import PayoffTable
from msagent.league.players import Historical, Player
from msagent.league.ratings import Elo, OpenSkillRating
from msagent.league.roles import Role, make_role
from msagent.league.settings import PSRO, LeagueSettings, PlayerSpec
from msagent.vocabulary import BOT, PLAYER, SNAPSHOT, EpisodeResult, Match, ModelKey, PolicyRef

STATE_VERSION = 1
"""Version of the :meth:`League.state_dict` layout."""


@dataclass(frozen=True)
class LeagueOrder:
    """What the league asks of a learner: take a snapshot now; reset to a snapshot."""

    snapshot: bool = False
    reset_to: PolicyRef | None = None


class League:
    """Players, their snapshots, the payoff table and ratings; makes matches and reads results.

    Args:
        settings: Players, roles and payoff settings.
        seed: Seed of every random draw (seats, opponents, resets).
        clock: Wall-clock source of timestamps (for tests).
        num_seats: Seats of the game (PSRO's meta-game has one axis per seat).
    """

    def __init__(
        self, settings: LeagueSettings, seed: int = 0, clock: Callable[[], float] = time.time,
        num_seats: int = 2,
    ) -> None:
        if not settings.players:
            raise ValueError("a league needs at least one player")
        self.settings = settings
        self.clock = clock
        self.rng = np.random.default_rng(seed)
        self.players: dict[str, Player] = {s.id: Player(s.id, s.role) for s in settings.players}
        self._seat_probs = {s.id: seat_probabilities(s, num_seats) for s in settings.players
                            if s.seat_weights is not None}
        self.historical: dict[str, Historical] = {}
        self.retired: dict[str, float] = {}
        """Snapshots retention retired (never drawn again) -> when; their results still count."""
        self.deleted: set[str] = set()
        """Retired snapshots whose weights were deleted."""
        self._retired_snapshots: dict[str, Historical] = {}
        self.payoff = PayoffTable(settings.payoff_decay, settings.min_games)
        self.elo = Elo(settings.elo_k)
        self.openskill = OpenSkillRating()
        self.match_log: deque[dict[str, Any]] = deque(maxlen=settings.match_log_size)
        self.reported = 0
        self.rejected = 0
        self.mixture: dict[str, Any] | None = None
        """The newest mixture of the snapshots (``msagent.psro.league_mixture``), if any."""
        self._roles = {name: make_role(name, settings) for name in {p.role for p in
                                                                     settings.players}}
        self.psro = None
        if settings.psro is not None:
            from msagent.psro.coordinator import PSROCoordinator

            self.psro = PSROCoordinator(settings.psro, num_seats)

    def trainable(self) -> list[str]:
        """Ids of the trainable players, in config order."""
        return list(self.players)

    def role_of(self, player_id: str) -> Role:
        """The role object of a player."""
        player = self._player(player_id)
        if player.role not in self._roles:
            self._roles[player.role] = make_role(player.role, self.settings)
        return self._roles[player.role]

    def next_match(self, player_id: str, num_seats: int = 2) -> Match:
        """A match for ``player_id``: a random learner seat, role-chosen opponents elsewhere."""
        if num_seats < 2:
            raise ValueError(f"a match needs at least 2 seats, got {num_seats}")
        player, role = self._player(player_id), self.role_of(player_id)
        fixed = role.fixed_seat(self, player)
        learner_seat = fixed if fixed is not None else self._draw_seat(player_id, num_seats)
        seats = tuple(player.ref if i == learner_seat else
                      self._checked(role, role.opponent_at(self, player, i, self.rng))
                      for i in range(num_seats))
        # Weighted seats and opponents drawn for their seat are final: the worker must not
        # even the seats out by swapping.
        return Match(seats, learner_seat, fixed is not None or role.seat_specific()
                     or player_id in self._seat_probs)

    def _checked(self, role: Role, ref: Any) -> PolicyRef:
        """A role's opponent, refused (naming the role) unless it is a known participant."""
        if not isinstance(ref, PolicyRef) or not self._known(ref):
            raise ValueError(
                f"role {role.name!r} chose the opponent {ref!r}, which is not a participant of "
                f"this league (a PolicyRef of a player, a snapshot in the league's historical "
                f"or a bot of [league.bots])")
        return ref

    def _draw_seat(self, player_id: str, num_seats: int) -> int:
        """A learner seat: by the player's seat weights, else uniform (as before weights)."""
        probs = self._seat_probs.get(player_id)
        if probs is None:
            return int(self.rng.integers(num_seats))
        _check_seat_count(player_id, len(probs), num_seats)
        return int(self.rng.choice(num_seats, p=probs))

    def report(self, result: EpisodeResult) -> None:
        """Record a finished game in the payoff, the ratings and the match log."""
        match = result.match
        if match is None or result.outcome is None or not self._valid(match):
            self.rejected += 1
            return
        learner = str(match.learner)
        for opponent in map(str, match.opponents()):
            if opponent != learner:  # self-play teaches nothing about relative strength
                self.payoff.record(learner, opponent, result.outcome)
                self.elo.update(learner, opponent, result.outcome)
                self.openskill.update(learner, opponent, result.outcome)
        self.reported += 1
        if self.psro is not None and self.players[match.learner.name].role == PSRO:
            self.psro.count_episode(match.learner.name)
        self.match_log.append(self._log_entry(result, match))

    def on_update(self, player_id: str, updates: int) -> LeagueOrder:
        """Whether the player should be snapshotted now (call after every update, and at 0)."""
        player = self._player(player_id)
        return LeagueOrder(snapshot=self.role_of(player_id).should_snapshot(self, player, updates))

    def add_snapshot(self, player_id: str, key: ModelKey, updates: int) -> LeagueOrder:
        """Add snapshot ``key`` of the player to the league; say whether to reset it (to what)."""
        player = self._player(player_id)
        if key.policy_id != player_id:
            raise ValueError(f"snapshot {key} is not of player {player_id!r}")
        ref = PolicyRef.snapshot(key)
        if str(ref) in self.historical:
            return LeagueOrder()
        self.historical[str(ref)] = Historical(ref, player_id, player.role, player.parent,
                                               float(self.clock()))
        player.snapshots.append(int(key.version))
        player.updates_at_snapshot, player.parent = int(updates), str(ref)
        if self.psro is not None and player.role == PSRO:
            self.psro.on_snapshot(player_id, str(ref))
        role = self.role_of(player_id)
        reset_to = role.reset_target(self, player, self.rng)
        if reset_to is not None:
            reset_to = self._checked(role, reset_to)
            player.parent, player.resets = str(reset_to), player.resets + 1
        return LeagueOrder(reset_to=reset_to)

    def retire(self, ids: list[str]) -> list[str]:
        """Stop drawing these snapshots (retention); the ids that were in the league."""
        moved = [sid for sid in ids if sid in self.historical]
        for sid in moved:
            self._retired_snapshots[sid] = self.historical.pop(sid)
            self.retired[sid] = float(self.clock())
        return moved

    def due_for_deletion(self, grace_s: float) -> list[str]:
        """Retired snapshots whose weights may go now (retired at least ``grace_s`` ago)."""
        now = float(self.clock())
        return [sid for sid, at in self.retired.items()
                if sid not in self.deleted and now - at >= grace_s]

    def snapshot_ids(self) -> list[str]:
        """Every snapshot's participant id, oldest first."""
        return list(self.historical)

    def record_mixture(self, record: dict[str, Any]) -> None:
        """Keep the newest mixture of the snapshots (solved outside: it needs the networks)."""
        unknown = [m for seat in record["seats"] for m in seat if m not in self.historical]
        if unknown:
            raise ValueError(f"the mixture names snapshots the league does not have: {unknown}")
        self.mixture = record

    def pfsp_distribution(self, player_id: str) -> dict[str, float]:
        """The player's current PFSP sampling distribution over snapshot ids."""
        return self.role_of(player_id).pfsp_distribution(self, self._player(player_id))

    def target_win_rate(self, player_id: str) -> float | None:
        """Mean win rate of the player against its role's targets (None without targets)."""
        player = self._player(player_id)
        targets = [str(t) for t in self.role_of(player_id).targets(self, player)
                   if str(t) != player_id]
        return float(self.payoff.win_rates(player_id, targets).mean()) if targets else None

    def summary(self) -> dict[str, Any]:
        """Figures for a progress display: per player role, Elo, win rate, snapshots; sizes."""
        players = {pid: {"role": p.role, "elo": self.elo.rating(pid),
                         "openskill": self.openskill.rating(pid),
                         "win_rate": self.target_win_rate(pid), "snapshots": len(p.snapshots),
                         "resets": p.resets, "parent": p.parent}
                   for pid, p in self.players.items()}
        return {"players": players, "population": len(self.players) + len(self.historical),
                "historical": len(self.historical), "retired": len(self.retired),
                "matches": self.reported,
                "rejected": self.rejected}

    def state_dict(self) -> dict[str, Any]:
        """The whole state as plain JSON-able data."""
        return {
            "version": STATE_VERSION,
            "players": [p.to_dict() for p in self.players.values()],
            "historical": [h.to_dict() for h in self.historical.values()],
            "payoff": self.payoff.state_dict(),
            "elo": self.elo.state_dict(),
            "openskill": self.openskill.state_dict(),
            "match_log": list(self.match_log),
            "reported": self.reported,
            "rejected": self.rejected,
            "rng": self.rng.bit_generator.state,
            "retired": [{**self._retired_snapshots[sid].to_dict(), "retired_s": at,
                         "deleted": sid in self.deleted} for sid, at in self.retired.items()],
            **({"psro": self.psro.to_json()} if self.psro is not None else {}),
            **({"mixture": self.mixture} if self.mixture is not None else {}),
        }

    @classmethod
    def from_state_dict(
        cls, settings: LeagueSettings, state: dict[str, Any],
        clock: Callable[[], float] = time.time, num_seats: int = 2,
    ) -> League:
        """A league continuing from ``state``; players new in ``settings`` start fresh."""
        league = cls(settings, 0, clock, num_seats)
        league.load_state_dict(state)
        return league

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Replace this league's state with ``state`` (keeping players only the settings name)."""
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"unsupported league state version {state.get('version')!r}")
        restored = {d["id"]: Player.from_dict(d) for d in state["players"]}
        self.players = {**restored, **{k: v for k, v in self.players.items()
                                       if k not in restored}}
        self.historical = {h.id: h for h in map(Historical.from_dict, state["historical"])}
        self.payoff.load_state_dict(state["payoff"])
        self.elo.load_state_dict(state["elo"])
        self.openskill.load_state_dict(state["openskill"])
        self.match_log = deque(state["match_log"], maxlen=self.settings.match_log_size)
        self.reported, self.rejected = int(state["reported"]), int(state["rejected"])
        self.rng.bit_generator.state = state["rng"]
        self.mixture = state.get("mixture")
        retired = state.get("retired", [])
        self._retired_snapshots = {r["ref"]: Historical.from_dict(r) for r in retired}
        self.retired = {r["ref"]: float(r["retired_s"]) for r in retired}
        self.deleted = {r["ref"] for r in retired if r["deleted"]}
        if self.psro is not None and "psro" in state:
            self.psro.load_json(state["psro"])

    def _player(self, player_id: str) -> Player:
        """The player ``player_id``, or a ValueError naming the known ones."""
        if player_id not in self.players:
            raise ValueError(f"unknown player {player_id!r}; known: {list(self.players)}")
        return self.players[player_id]

    def _valid(self, match: Match) -> bool:
        """Whether the learner seat holds a known player and every seat a known participant."""
        return match.learner.kind == PLAYER and all(self._known(r) for r in match.seats)

    def _known(self, ref: PolicyRef) -> bool:
        """Whether ``ref`` names a player, a snapshot or a bot of this league."""
        if ref.kind == PLAYER:
            return ref.name in self.players
        if ref.kind == SNAPSHOT:  # a retired one's games drawn before its retirement count
            return str(ref) in self.historical or str(ref) in self.retired
        return ref.kind == BOT and ref.name in self.settings.bots

    def _log_entry(self, result: EpisodeResult, match: Match) -> dict[str, Any]:
        """One plain-data line of the match log."""
        return {"time": float(self.clock()), "seats": [str(r) for r in match.seats],
                "learner_seat": match.learner_seat, "outcome": float(result.outcome or 0.0),
                "length": int(result.length), "version": int(result.policy.version)}


def seat_probabilities(spec: PlayerSpec, num_seats: int) -> np.ndarray:
    """The normalized seat weights of a player, checked against the game's seat count."""
    weights = np.asarray(spec.seat_weights, dtype=float)
    _check_seat_count(spec.id, len(weights), num_seats)
    if (weights < 0).any() or not np.isfinite(weights).all() or weights.sum() <= 0:
        raise ValueError(f"player {spec.id!r}: seat weights must be finite, >= 0 and not all "
                         f"0, got {list(spec.seat_weights or ())}")
    return weights / weights.sum()


def _check_seat_count(player_id: str, weights: int, num_seats: int) -> None:
    """Refuse a player's seat weights that do not give one weight per seat of the game."""
    if weights != num_seats:
        raise ValueError(f"player {player_id!r} has {weights} seat weights for a "
                         f"{num_seats}-seat game")
