"""The league's settings as plain frozen dataclasses (what ``[league]`` in a TOML becomes).

:class:`msagent.config.league.LeagueSection` validates the TOML table and builds these; they
can also be built directly (tests, notebooks) and carry the same defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from msagent.script_loader import is_script_ref
from msagent.vocabulary import PolicyId

MAIN, MAIN_EXPLOITER, LEAGUE_EXPLOITER = "main", "main_exploiter", "league_exploiter"
ROLE_NAMES = (MAIN, MAIN_EXPLOITER, LEAGUE_EXPLOITER)

PSRO = "psro"
"""The role of the best response PSRO trains (made by ``[league.psro]``, not listed by users)."""
BEST_RESPONSE = "best_response"
"""A player that plays only the league's mixture, by its weights for each seat, and is never
reset: ``msagent exploit``'s learner against a frozen player or mixture of another run."""


@dataclass(frozen=True)
class PlayerSpec:
    """One trainable player of the league: its policy id, its role and how often it takes
    each seat.

    Attributes:
        id: The policy id.
        role: One of :data:`ROLE_NAMES` (or :data:`PSRO`).
        seat_weights: Relative weight of each seat as the player's seat (None: every seat
            equally often). A seat that is harder to play (the second mover's) can be given
            more of the player's games.
    """

    id: PolicyId
    role: str = MAIN
    seat_weights: tuple[float, ...] | None = None


@dataclass(frozen=True)
class SnapshotSettings:
    """When a player is snapshotted into the league.

    Attributes:
        snapshot_every_updates: Updates since the last snapshot that force a new one.
        snapshot_win_rate: Lowest win rate against every target (each with enough games) that
            triggers a snapshot early.
        snapshot_min_updates: Updates since the last snapshot before the win-rate trigger may
            fire (the win rates do not change when a snapshot is taken).
        pfsp_weighting: PFSP weighting of the role's opponent draws.
        pfsp_exponent: Exponent ``k`` of the ``"hard"`` weighting ``(1 - p) ** k``.
    """

    snapshot_every_updates: int = 50
    snapshot_win_rate: float = 0.7
    snapshot_min_updates: int = 10
    pfsp_weighting: str = "hard"
    pfsp_exponent: float = 2.0


@dataclass(frozen=True)
class MainSettings(SnapshotSettings):
    """Main agents: their opponent mix (weights, normalized); they never reset.

    Attributes:
        self_play: Weight of games against its own newest parameters.
        pfsp: Weight of PFSP games against all historical snapshots.
        exploiters: Weight of games against the current exploiters (PFSP when there are none).
        bots: Weight of games against the scripted bots ``bot_opponents`` (uniformly): a
            curriculum that punishes blunders a league of equally young networks overlooks
            (a bot that always takes an immediate win teaches to block).
        bot_opponents: Names of ``[league.bots]`` entries main agents train against.
    """

    self_play: float = 0.35
    pfsp: float = 0.5
    exploiters: float = 0.15
    bots: float = 0.0
    bot_opponents: tuple[str, ...] = ()


@dataclass(frozen=True)
class MainExploiterSettings(SnapshotSettings):
    """Main exploiters: play the main agents; reset after each snapshot.

    Attributes:
        fallback_win_rate: Below this win rate against a main agent, play PFSP over that main
            agent's snapshots instead.
        reset_to: What a reset loads: ``"initial"`` (its own first snapshot, AlphaStar's rule)
            or ``"main"`` (the newest snapshot of a main agent, so each new exploiter starts
            as strong as the agent it hunts instead of from scratch).
    """

    pfsp_weighting: str = "variance"
    fallback_win_rate: float = 0.2
    reset_to: str = "initial"

    def __post_init__(self) -> None:
        """Refuse a reset target that is not one of the two."""
        if self.reset_to not in ("initial", "main"):
            raise ValueError(f"main exploiter reset_to must be 'initial' or 'main', got "
                             f"{self.reset_to!r}")


@dataclass(frozen=True)
class LeagueExploiterSettings(SnapshotSettings):
    """League exploiters: PFSP over all snapshots; reset with ``reset_prob`` after a snapshot.

    Attributes:
        opponents: ``"pfsp"`` (AlphaStar's rule) or ``"mixture"``: opponents drawn from the
            league's mixture (``[league.mixture]``) once there is one, so that its snapshots
            are best responses to the league's answer (PSRO's step, run continuously).
    """

    pfsp_weighting: str = "linear_capped"
    reset_prob: float = 0.25
    opponents: str = "pfsp"

    def __post_init__(self) -> None:
        """Refuse an opponent rule that is not one of the two."""
        if self.opponents not in ("pfsp", "mixture"):
            raise ValueError(f"league exploiter opponents must be 'pfsp' or 'mixture', got "
                             f"{self.opponents!r}")


@dataclass(frozen=True)
class LeagueSettings:
    """The whole league.

    Attributes:
        players: The trainable players.
        payoff_decay: Factor applied to a pair's payoff counts before each new game.
        min_games: Decayed games before a win rate is trusted (else 0.5).
        elo_k: Elo's K factor.
        match_log_size: Newest reported matches kept in the match log.
        main, main_exploiter, league_exploiter: Each role's settings.
        bots: Scripted bots by name -> script path (as written in the config).
        psro: PSRO with an RL oracle (the player ``br`` in role ``psro``), or None.
    """

    players: tuple[PlayerSpec, ...] = (PlayerSpec("main", MAIN),)
    payoff_decay: float = 0.99
    min_games: float = 10.0
    elo_k: float = 16.0
    match_log_size: int = 10_000
    main: MainSettings = field(default_factory=MainSettings)
    main_exploiter: MainExploiterSettings = field(default_factory=MainExploiterSettings)
    league_exploiter: LeagueExploiterSettings = field(default_factory=LeagueExploiterSettings)
    bots: dict[str, str] = field(default_factory=dict)
    psro: Any = None
    """A :class:`msagent.psro.coordinator.PSROSettings` (typed loosely: league does not import
    psro, which imports scipy)."""

    def role_settings(self, role: str) -> SnapshotSettings:
        """The settings of ``role`` (a user's role starts from the defaults)."""
        if role in (PSRO, BEST_RESPONSE) or is_script_ref(role):
            return SnapshotSettings()
        if role not in ROLE_NAMES:
            raise ValueError(f"unknown role {role!r}; known: {list(ROLE_NAMES)}")
        return getattr(self, role)
