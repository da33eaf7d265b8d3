"""The ``[league]`` table: the league's players, their roles, payoff and rating settings.

Example::

    [league]
    payoff_decay = 0.99
    min_games = 10
    [[league.players]]
    id = "main"
    role = "main"
    [[league.players]]
    id = "main_exploiter"
    role = "main_exploiter"
    count = 2                       # ids main_exploiter_0, main_exploiter_1
    [league.roles.main]
    self_play = 0.35
    bots = 0.1                      # games against scripted bots, drawn from bot_opponents
    bot_opponents = ["greedy"]
    [league.bots]
    random = "bots/random_bot.py"   # kept as written (relative to the TOML's folder)

Defaults come from :mod:`msagent.league.settings`, so the table and the dataclasses agree.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from msagent.config.base import Section
from msagent.config.custom_services import ResourcesSection
from msagent.config.league_database import LeagueDatabaseSection
from msagent.config.retention import RetentionSection
from msagent.config.mixture import MixtureSection
from msagent.config.psro import PSROSection
from msagent.league.matchmaking import WEIGHTINGS
from msagent.league.settings import (
    BEST_RESPONSE, MAIN, PSRO, ROLE_NAMES, LeagueExploiterSettings, LeagueSettings,
    MainExploiterSettings, MainSettings, PlayerSpec, SnapshotSettings,
)
from msagent.script_loader import is_script_ref

PSRO_SEATS = 2
"""Seats PSRO's per-seat best responses are made for (``symmetric = false``)."""
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
"""Player ids and bot names: no ``:`` (participant ids use it for versions and bots)."""


class PlayerLearnerSection(Section):
    """A league player's own ``[services.learner]`` keys (the others are the run's), for a
    player whose algorithm learns otherwise, e.g. off-policy from a replay table.

    Attributes:
        max_policy_lag: Fragments older than this many versions are dropped (an off-policy
            learner replaying its table: a large number).
        batch_fragments: Fragments drawn per update (default: the league's one batch size).
        queued_batches: Batches its table may hold before env workers wait to ship more.
        device: Where it trains (``cpu``, ``cuda``, ``cuda:N``, ``auto``).
        resources: Where it runs on a Ray cluster (Ray actor options).
    """

    max_policy_lag: int | None = Field(None, ge=0)
    batch_fragments: int | None = Field(None, ge=1)
    queued_batches: int | None = Field(None, ge=0)
    device: str | None = None
    resources: ResourcesSection | None = None

    def overrides(self) -> dict[str, object]:
        """The keys set, to lay over ``[services.learner]``."""
        return {k: getattr(self, k) for k in self.model_fields_set if getattr(self, k) is not None}


class LeaguePlayerSection(Section):
    """One ``[[league.players]]`` entry.

    Attributes:
        id: The policy id (with ``count > 1``: the prefix of ``<id>_0``, ``<id>_1``, ...).
        role: One of ``main``, ``main_exploiter``, ``league_exploiter`` (or ``best_response``:
            plays only the league's mixture, the role ``msagent exploit`` gives its learner).
        count: How many players of this entry.
        env_share: Env slots this entry's players get relative to the others (round robin
            over all env slots; 2 gives a player twice the games, and twice the batch, of a
            player with 1).
        seat_weights: Relative weight of each seat as this entry's players' seat, one per
            seat of the game (``[1, 2]``: the second seat in two games of three); unset, every
            seat equally often.
        init: Start from these weights instead of a fresh network: a run directory (its
            newest checkpoint), a checkpoint file or a snapshot file (``.safetensors``); a
            relative path is taken from the working directory. Ignored on ``--resume``.
        init_player: The player whose weights ``init`` takes from a league checkpoint
            (default: this entry's own id).
        agent: This entry's own agent script (its network; relative to the TOML): its
            snapshots keep it; unset, ``[scripts] agent``.
        learner: This entry's own learner keys (:class:`PlayerLearnerSection`).
        buffer: This entry's own ``[services.buffer]`` keys for its players' tables (an
            inline table: ``buffer = { sampler = "uniform", max_times_sampled = 8 }``), over
            the run's.
        algorithm: This entry's own ``[algorithm]`` keys (an inline table: ``algorithm = {
            lr = 0.0003 }``): each key overrides the run's ``[algorithm]``; naming another
            algorithm (its ``name`` or ``script``) starts from that one's defaults instead.
    """

    id: str
    role: str = MAIN
    count: int = Field(1, ge=1)
    env_share: int = Field(1, ge=1)
    seat_weights: list[Annotated[float, Field(ge=0, allow_inf_nan=False)]] | None = None
    init: str | None = None
    init_player: str | None = None
    agent: str | None = None
    learner: PlayerLearnerSection | None = None
    buffer: dict[str, Any] | None = None
    algorithm: dict[str, Any] | None = None

    @field_validator("init")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        """Resolve the path now, so the run's saved config names the same file later."""
        return str(Path(value).expanduser().resolve()) if value else None

    @field_validator("seat_weights")
    @classmethod
    def _some_weight(cls, value: list[float] | None) -> list[float] | None:
        """Refuse weights that give no seat at all."""
        if value is not None and (len(value) < 2 or sum(value) <= 0):
            raise ValueError(f"seat_weights needs one weight per seat (at least 2), not all "
                             f"0; got {value}")
        return value

    @field_validator("id")
    @classmethod
    def _plain_id(cls, value: str) -> str:
        """Refuse ids that would not parse back from a participant id."""
        return _plain_name(value)

    @field_validator("role")
    @classmethod
    def _known_role(cls, value: str) -> str:
        """Name the known roles when an unknown one is given (or a user's ``roles.py:Class``)."""
        if value not in (*ROLE_NAMES, BEST_RESPONSE) and not is_script_ref(value):
            raise ValueError(f"unknown role {value!r}; expected one of {list(ROLE_NAMES)} or "
                             "a role class of your own, 'path/to/roles.py:ClassName'")
        return value

    def ids(self) -> list[str]:
        """The player ids this entry makes."""
        return [self.id] if self.count == 1 else [f"{self.id}_{i}" for i in range(self.count)]


class _RoleSection(Section):
    """Settings every role has: the snapshot rule and the PFSP weighting."""

    snapshot_every_updates: int = Field(SnapshotSettings.snapshot_every_updates, ge=1)
    snapshot_win_rate: float = Field(SnapshotSettings.snapshot_win_rate, ge=0, le=1)
    snapshot_min_updates: int = Field(SnapshotSettings.snapshot_min_updates, ge=0)
    pfsp_weighting: str = SnapshotSettings.pfsp_weighting
    pfsp_exponent: float = Field(SnapshotSettings.pfsp_exponent, gt=0)

    @field_validator("pfsp_weighting")
    @classmethod
    def _known_weighting(cls, value: str) -> str:
        """Name the known PFSP weightings when an unknown one is given."""
        if value not in WEIGHTINGS:
            raise ValueError(f"unknown PFSP weighting {value!r}; expected one of "
                             f"{sorted(WEIGHTINGS)}")
        return value


class MainRoleSection(_RoleSection):
    """``[league.roles.main]``: the opponent mix of main agents (weights, normalized)."""

    self_play: float = Field(MainSettings.self_play, ge=0)
    pfsp: float = Field(MainSettings.pfsp, ge=0)
    exploiters: float = Field(MainSettings.exploiters, ge=0)
    bots: float = Field(MainSettings.bots, ge=0)
    bot_opponents: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _some_weight(self) -> MainRoleSection:
        """Refuse a mix whose weights are all zero, and bot games without bots to play."""
        if self.self_play + self.pfsp + self.exploiters + self.bots <= 0:
            raise ValueError("self_play + pfsp + exploiters + bots must be > 0")
        if self.bots > 0 and not self.bot_opponents:
            raise ValueError(f"bots = {self.bots:g} needs bot_opponents, the names of "
                             "[league.bots] entries to train against")
        return self


class MainExploiterRoleSection(_RoleSection):
    """``[league.roles.main_exploiter]``: PFSP over main snapshots below ``fallback_win_rate``."""

    pfsp_weighting: str = MainExploiterSettings.pfsp_weighting
    fallback_win_rate: float = Field(MainExploiterSettings.fallback_win_rate, ge=0, le=1)
    reset_to: Literal["initial", "main"] = "initial"


class LeagueExploiterRoleSection(_RoleSection):
    """``[league.roles.league_exploiter]``: reset probability after each snapshot."""

    pfsp_weighting: str = LeagueExploiterSettings.pfsp_weighting
    reset_prob: float = Field(LeagueExploiterSettings.reset_prob, ge=0, le=1)
    """Probability that a league exploiter is reset to its first snapshot after a snapshot."""
    opponents: Literal["pfsp", "mixture"] = "pfsp"
    """``mixture``: opponents drawn from the league's mixture (``[league.mixture]``) once
    there is one: its snapshots are best responses to the league's answer."""


class RolesSection(Section):
    """``[league.roles.*]``: one table per role."""

    main: MainRoleSection = Field(default_factory=MainRoleSection)
    main_exploiter: MainExploiterRoleSection = Field(default_factory=MainExploiterRoleSection)
    league_exploiter: LeagueExploiterRoleSection = Field(
        default_factory=LeagueExploiterRoleSection)


def _default_players() -> list[LeaguePlayerSection]:
    """One main agent (self-play and PFSP over its own snapshots)."""
    return [LeaguePlayerSection(id="main", role=MAIN)]


class LeagueSection(Section):
    """``[league]``: who trains, in which role, and how results are counted.

    Attributes:
        payoff_decay: Factor applied to a pair's payoff counts before each new game (0, 1].
        min_games: Decayed games before a win rate is trusted (else 0.5).
        elo_k: Elo's K factor.
        match_log_size: Newest matches kept in the league's match log.
        players: ``[[league.players]]`` entries.
        roles: Per-role settings.
        bots: Scripted bots: name -> script path (relative to the TOML's folder, kept as written).
        psro: ``[league.psro]``: run PSRO (meta-solver, oracle, iterations) instead of roles.
        mixture: ``[league.mixture]``: the snapshots mixed by a meta-solver (small games).
        frozen_agents: Agent scripts of frozen snapshots whose owners are not players of this
            league (owner id -> script): another run's players, which ``msagent exploit``
            plays against.
        database: ``[league.database]``: where every match, rating and snapshot is kept.
        retention: ``[league.retention]``: which snapshots' weights a long league keeps.
    """

    payoff_decay: float = Field(LeagueSettings.payoff_decay, gt=0, le=1)
    min_games: float = Field(LeagueSettings.min_games, ge=1)
    elo_k: float = Field(LeagueSettings.elo_k, gt=0)
    match_log_size: int = Field(LeagueSettings.match_log_size, ge=1)
    players: list[LeaguePlayerSection] = Field(default_factory=_default_players, min_length=1)
    roles: RolesSection = Field(default_factory=RolesSection)
    bots: dict[str, str] = Field(default_factory=dict)
    psro: PSROSection | None = None
    mixture: MixtureSection = Field(default_factory=MixtureSection)
    frozen_agents: dict[str, str] = Field(default_factory=dict)
    database: LeagueDatabaseSection = Field(default_factory=LeagueDatabaseSection)
    retention: RetentionSection = Field(default_factory=RetentionSection)

    @field_validator("bots")
    @classmethod
    def _plain_bot_names(cls, value: dict[str, str]) -> dict[str, str]:
        """Refuse bot names that would not parse back from ``bot:<name>``, and empty paths."""
        for name, path in value.items():
            _plain_name(name)
            if not path.strip():
                raise ValueError(f"bot {name!r}: empty script path")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> LeagueSection:
        """Unique ids, a main agent, and a ``min_games`` that decayed counts can reach."""
        ids = self.player_ids()
        duplicates = sorted({pid for pid in ids if ids.count(pid) > 1})
        if duplicates:
            raise ValueError(f"duplicate player ids {duplicates} in [[league.players]]")
        if self.psro is not None and any(p.init for p in self.players):
            raise ValueError("[[league.players]] init is not used under [league.psro]: its "
                             "best responses start from PSRO's own population (br_init)")
        if self.psro is not None and any(p.agent or p.algorithm or p.learner or p.buffer
                                         for p in self.players):
            raise ValueError("[[league.players]] agent, algorithm, learner and buffer are not "
                             "used under [league.psro]: its best responses share [scripts] "
                             "agent, [algorithm] and [services]")
        if not any(p.role == MAIN for p in self.players) and \
                not all(p.role == BEST_RESPONSE for p in self.players):
            raise ValueError("[[league.players]] needs at least one player with role = 'main'")
        unknown = [b for b in self.roles.main.bot_opponents if b not in self.bots]
        if unknown:
            raise ValueError(f"[league.roles.main] bot_opponents {unknown} are not in "
                             f"[league.bots] (declared: {sorted(self.bots) or 'none'})")
        if self.payoff_decay < 1 and self.min_games >= 1 / (1 - self.payoff_decay):
            raise ValueError(f"min_games = {self.min_games:g} is never reached with payoff_decay = "
                             f"{self.payoff_decay:g} (decayed games stay below "
                             f"{1 / (1 - self.payoff_decay):.1f})")
        return self

    def player_ids(self) -> list[str]:
        """Every player id, entries with ``count`` expanded (PSRO: its best response)."""
        if self.psro is not None:
            from msagent.psro.coordinator import br_players

            return br_players(self.psro.symmetric, PSRO_SEATS)
        return [pid for entry in self.players for pid in entry.ids()]

    def entry_of(self, player: str) -> LeaguePlayerSection | None:
        """The ``[[league.players]]`` entry a player id comes from (None: PSRO's players)."""
        return next((e for e in self.players if player in e.ids()), None)

    def env_shares(self) -> dict[str, int]:
        """Each player's share of the env slots."""
        if self.psro is not None:
            return {p: 1 for p in self.player_ids()}
        return {pid: e.env_share for e in self.players for pid in e.ids()}

    def to_settings(self) -> LeagueSettings:
        """The league's settings dataclasses."""
        specs = tuple(PlayerSpec(pid, e.role, tuple(e.seat_weights) if e.seat_weights else None)
                      for e in self.players for pid in e.ids())
        if self.psro is not None:
            specs = tuple(PlayerSpec(p, PSRO) for p in self.player_ids())
        return LeagueSettings(
            players=specs, payoff_decay=self.payoff_decay, min_games=self.min_games,
            elo_k=self.elo_k, match_log_size=self.match_log_size,
            main=MainSettings(**{**self.roles.main.model_dump(),
                                 "bot_opponents": tuple(self.roles.main.bot_opponents)}),
            main_exploiter=MainExploiterSettings(**self.roles.main_exploiter.model_dump()),
            league_exploiter=LeagueExploiterSettings(**self.roles.league_exploiter.model_dump()),
            bots=dict(self.bots), psro=self.psro.coordinator_settings() if self.psro else None,
        )


def _plain_name(value: str) -> str:
    """Return ``value`` if it is a plain name (letters, digits, ``_ . -``), else fail."""
    if not _ID.fullmatch(value):
        raise ValueError(f"expected a name of letters, digits, '_', '.' or '-' (no ':'), "
                         f"got {value!r}")
    return value
