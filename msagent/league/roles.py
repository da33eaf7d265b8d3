"""AlphaStar's league roles: whom each plays, when it is snapshotted, when it is reset.

A role reads the league through :class:`LeagueView` (players, snapshots, payoff) and changes
nothing; :class:`msagent.league.league.League` applies its decisions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from msagent.league.matchmaking import (fictitious_self_play, from_distribution, pfsp, pfsp_weights,
                                        self_play)
from msagent.errors import ScriptError
from msagent.league.payoff import PayoffTable
from msagent.league.players import Historical, Player
from msagent.league.settings import (
    BEST_RESPONSE, LEAGUE_EXPLOITER, MAIN, MAIN_EXPLOITER, PSRO, ROLE_NAMES,
    LeagueExploiterSettings, LeagueSettings, MainExploiterSettings, MainSettings, SnapshotSettings,
)
from msagent.script_loader import is_script_ref, load_script
from msagent.vocabulary import PolicyRef


class LeagueView(Protocol):
    """What a role may read of the league."""

    players: Mapping[str, Player]
    historical: Mapping[str, Historical]
    payoff: PayoffTable
    psro: Any
    """The PSRO coordinator (``distribution()``, ``br_due()``), or None."""
    mixture: dict[str, Any] | None
    """The league's newest mixture of its snapshots (weights per seat), or None."""


def historical_refs(view: LeagueView, owner: str | None = None) -> list[PolicyRef]:
    """Refs of the snapshots (of ``owner`` only, when given), oldest first."""
    return [h.ref for h in view.historical.values() if owner is None or h.owner == owner]


def players_of(view: LeagueView, *roles: str) -> list[Player]:
    """The players having one of ``roles``, in league order."""
    return [p for p in view.players.values() if p.role in roles]


def win_rates(view: LeagueView, player: Player, refs: list[PolicyRef]) -> np.ndarray:
    """The player's current win rates against ``refs``."""
    return view.payoff.win_rates(player.id, [str(r) for r in refs])


class Role:
    """What every role shares: the snapshot rule and PFSP with the role's weighting."""

    name = ""

    def __init__(self, settings: SnapshotSettings) -> None:
        self.settings = settings

    def targets(self, view: LeagueView, player: Player) -> list[PolicyRef]:
        """The participants whose defeat triggers a snapshot (all snapshots by default)."""
        return historical_refs(view)

    def pfsp_candidates(self, view: LeagueView, player: Player) -> list[PolicyRef]:
        """The snapshots the role draws PFSP opponents from (all by default)."""
        return historical_refs(view)

    def choose_opponent(
        self, view: LeagueView, player: Player, rng: np.random.Generator
    ) -> PolicyRef:
        """PFSP over the candidates; self-play while there are none."""
        return self._pfsp_or_self(view, player, self.pfsp_candidates(view, player), rng)

    def fixed_seat(self, view: LeagueView, player: Player) -> int | None:
        """The one seat the player plays (None: a random seat each match)."""
        return None

    def seat_specific(self) -> bool:
        """Whether an opponent is drawn for the seat it takes (then a match's seats must not
        be swapped by the env worker)."""
        return False

    def opponent_at(self, view: LeagueView, player: Player, seat: int,
                    rng: np.random.Generator) -> PolicyRef:
        """The opponent for ``seat`` (the role's choice, whatever the seat by default)."""
        return self.choose_opponent(view, player, rng)

    def should_snapshot(self, view: LeagueView, player: Player, updates: int) -> bool:
        """At once without a snapshot; then every N updates, or early on beating the targets."""
        if not player.snapshots:
            return True
        gap = updates - player.updates_at_snapshot
        if gap >= self.settings.snapshot_every_updates:
            return True
        return gap >= self.settings.snapshot_min_updates and self.beats_targets(view, player)

    def beats_targets(self, view: LeagueView, player: Player) -> bool:
        """Whether every target had enough games and the win rate against each is high enough."""
        targets = [str(t) for t in self.targets(view, player) if str(t) != player.id]
        if not targets:
            return False
        enough = all(view.payoff.games(player.id, t) >= view.payoff.min_games for t in targets)
        rates = view.payoff.win_rates(player.id, targets)
        return enough and float(rates.min()) >= self.settings.snapshot_win_rate

    def reset_target(
        self, view: LeagueView, player: Player, rng: np.random.Generator
    ) -> PolicyRef | None:
        """The snapshot to reset to right after a snapshot (None: keep going)."""
        return None

    def pfsp_distribution(self, view: LeagueView, player: Player) -> dict[str, float]:
        """The current PFSP sampling probabilities over the candidates' participant ids."""
        refs = self.pfsp_candidates(view, player)
        probs = pfsp_weights(win_rates(view, player, refs), self.settings.pfsp_weighting,
                             self.settings.pfsp_exponent)
        return {str(r): float(p) for r, p in zip(refs, probs)}

    def _pfsp_or_self(
        self, view: LeagueView, player: Player, refs: list[PolicyRef], rng: np.random.Generator
    ) -> PolicyRef:
        """A PFSP draw among ``refs``, or self-play when empty."""
        if not refs:
            return self_play(player.id)
        return pfsp(refs, win_rates(view, player, refs), self.settings.pfsp_weighting, rng,
                    self.settings.pfsp_exponent)


class MainRole(Role):
    """A main agent: self-play, PFSP over all snapshots, or a current exploiter; never resets."""

    name = MAIN
    settings: MainSettings

    def choose_opponent(
        self, view: LeagueView, player: Player, rng: np.random.Generator
    ) -> PolicyRef:
        """Draw a branch of the mix, then an opponent in it."""
        s = self.settings
        mix = np.array([s.self_play, s.pfsp, s.exploiters, s.bots if s.bot_opponents else 0.0])
        branch = int(rng.choice(4, p=mix / mix.sum()))
        if branch == 3:
            return PolicyRef.bot(s.bot_opponents[int(rng.integers(len(s.bot_opponents)))])
        history = historical_refs(view)
        if branch == 0 or not history:
            return self_play(player.id)
        exploiters = [p.ref for p in players_of(view, MAIN_EXPLOITER, LEAGUE_EXPLOITER)]
        if branch == 2 and exploiters:
            return fictitious_self_play(exploiters, rng)
        return self._pfsp_or_self(view, player, history, rng)


class MainExploiterRole(Role):
    """A main exploiter: plays the main agents (their snapshots by PFSP while it loses badly)."""

    name = MAIN_EXPLOITER
    settings: MainExploiterSettings

    def targets(self, view: LeagueView, player: Player) -> list[PolicyRef]:
        """The current main agents."""
        return [p.ref for p in players_of(view, MAIN)]

    def pfsp_candidates(self, view: LeagueView, player: Player) -> list[PolicyRef]:
        """The main agents' snapshots."""
        return [r for p in players_of(view, MAIN) for r in historical_refs(view, p.id)]

    def choose_opponent(
        self, view: LeagueView, player: Player, rng: np.random.Generator
    ) -> PolicyRef:
        """A main agent; PFSP over its snapshots when the win rate against it is too low."""
        mains = players_of(view, MAIN)
        if not mains:
            return super().choose_opponent(view, player, rng)
        target = fictitious_self_play(mains, rng)
        if view.payoff.win_rate(player.id, target.id) >= self.settings.fallback_win_rate:
            return target.ref
        snaps = historical_refs(view, target.id)
        return self._pfsp_or_self(view, player, snaps, rng) if snaps else target.ref

    def reset_target(
        self, view: LeagueView, player: Player, rng: np.random.Generator
    ) -> PolicyRef | None:
        """After every snapshot but the first: its initial snapshot, or with ``reset_to =
        "main"`` a main agent's newest snapshot (its own initial one while there is none)."""
        if len(player.snapshots) <= 1:
            return None
        if self.settings.reset_to == "main":
            mains = {p.id for p in players_of(view, MAIN)}
            newest = [h.ref for h in view.historical.values() if h.owner in mains]  # oldest first
            if newest:
                return newest[-1]
        return player.first_snapshot()


class LeagueExploiterRole(Role):
    """A league exploiter: PFSP over all snapshots (or the league's mixture); resets with
    ``reset_prob`` after a snapshot."""

    name = LEAGUE_EXPLOITER
    settings: LeagueExploiterSettings

    def seat_specific(self) -> bool:
        """Drawn from the mixture's weights for each seat: yes."""
        return self.settings.opponents == "mixture"

    def opponent_at(self, view: LeagueView, player: Player, seat: int,
                    rng: np.random.Generator) -> PolicyRef:
        """With ``opponents = "mixture"`` and a mixture solved: a snapshot drawn by its
        weights for ``seat``; else PFSP."""
        weights = mixture_weights(view, seat) if self.settings.opponents == "mixture" else {}
        if not weights:
            return self.choose_opponent(view, player, rng)
        return from_distribution([PolicyRef.parse(k) for k in weights],
                                 np.array(list(weights.values())), rng)

    def reset_target(
        self, view: LeagueView, player: Player, rng: np.random.Generator
    ) -> PolicyRef | None:
        """Its initial snapshot with probability ``reset_prob`` (never on the first snapshot)."""
        if len(player.snapshots) <= 1 or rng.random() >= self.settings.reset_prob:
            return None
        return player.first_snapshot()


def mixture_weights(view: LeagueView, seat: int) -> dict[str, float]:
    """The league mixture's weights for ``seat`` over snapshots still in the league ({}
    without a mixture)."""
    seats = (getattr(view, "mixture", None) or {}).get("seats") or []
    weights = seats[seat % len(seats)] if seats else {}
    return {k: w for k, w in weights.items() if k in view.historical}


class BestResponseRole(Role):
    """A best response to the league's mixture (``msagent exploit``): every opponent drawn by
    the mixture's weights for its seat; snapshotted once (its start), never reset."""

    name = BEST_RESPONSE

    def seat_specific(self) -> bool:
        """Drawn for the seat: yes."""
        return True

    def opponent_at(self, view: LeagueView, player: Player, seat: int,
                    rng: np.random.Generator) -> PolicyRef:
        """A member of the mixture by its weights for ``seat``.

        Raises:
            ValueError: the league has no mixture (nothing to respond to).
        """
        weights = mixture_weights(view, seat)
        if not weights:
            raise ValueError(f"role {self.name!r} needs the league's mixture to play; the league "
                             "has none (msagent exploit starts the league with one)")
        return from_distribution([PolicyRef.parse(k) for k in weights],
                                 np.array(list(weights.values())), rng)

    def should_snapshot(self, view: LeagueView, player: Player, updates: int) -> bool:
        """Only its start (the league's snapshots are what it plays, not its own)."""
        return not player.snapshots


class PSRORole(Role):
    """PSRO's best response: opponents drawn from the meta-strategy over the population(s);
    snapshotted once it has trained its budget against the current one. With one population
    per seat, each seat has its own best response, which only plays that seat."""

    name = PSRO

    def fixed_seat(self, view: LeagueView, player: Player) -> int | None:
        """The seat of a per-seat best response (None for a symmetric one)."""
        return view.psro.seat_of(player.id) if view.psro is not None else None

    def opponent_at(self, view: LeagueView, player: Player, seat: int,
                    rng: np.random.Generator) -> PolicyRef:
        """A member of ``seat``'s population drawn from the meta-strategy; before the first
        solve, the player itself (symmetric) or the seat's first member."""
        dist = view.psro.distribution(seat) if view.psro is not None else {}
        if not dist:
            symmetric = view.psro is None or view.psro.seat_of(player.id) is None
            return self_play(player.id if symmetric else view.psro.players[seat])
        return from_distribution([PolicyRef.parse(k) for k in dist], np.array(list(dist.values())),
                                 rng)

    def choose_opponent(
        self, view: LeagueView, player: Player, rng: np.random.Generator
    ) -> PolicyRef:
        """An opponent for the seat after the player's."""
        return self.opponent_at(view, player, 1, rng)

    def should_snapshot(self, view: LeagueView, player: Player, updates: int) -> bool:
        """At once (the first member), then whenever the coordinator says the budget is spent."""
        return not player.snapshots or (view.psro is not None and view.psro.br_due(player.id))

    def reset_target(
        self, view: LeagueView, player: Player, rng: np.random.Generator
    ) -> PolicyRef | None:
        """Its initial parameters after every snapshot but the first (``br_init = "initial"``:
        each response from scratch), or None (``"newest"``: go on from the one just frozen)."""
        warm = view.psro is not None and view.psro.settings.br_init == "newest"
        return player.first_snapshot() if len(player.snapshots) > 1 and not warm else None

    def pfsp_distribution(self, view: LeagueView, player: Player) -> dict[str, float]:
        """The meta-strategy it samples opponents from."""
        return view.psro.distribution(1) if view.psro is not None else {}


ROLES: dict[str, type[Role]] = {
    MAIN: MainRole, MAIN_EXPLOITER: MainExploiterRole, LEAGUE_EXPLOITER: LeagueExploiterRole,
    PSRO: PSRORole, BEST_RESPONSE: BestResponseRole,
}
"""Role classes by name."""


def make_role(name: str, settings: LeagueSettings) -> Role:
    """The role ``name`` (or a user's ``roles.py:Class``) configured from ``settings``."""
    if is_script_ref(name):
        return user_role(name, settings.role_settings(name))
    if name not in ROLES:
        raise ValueError(f"unknown role {name!r}; known: {list(ROLE_NAMES)}")
    return ROLES[name](settings.role_settings(name))


def user_role(ref: str, settings: SnapshotSettings) -> Role:
    """A user's role class from ``path.py:ClassName``, checked to be a :class:`Role`.

    Raises:
        ScriptError: the script defines no such class, or it does not subclass ``Role``.
    """
    path, _, class_name = ref.rpartition(":")
    found = getattr(load_script(path), class_name, None)
    if not (isinstance(found, type) and issubclass(found, Role)):
        got = "nothing" if found is None else repr(found)
        raise ScriptError(f"role {ref!r}: the script must define a class {class_name} that "
                          f"subclasses msagent.league.Role; got {got}")
    role = found(settings)
    role.name = ref
    return role


def check_role(ref: str) -> None:
    """Load a user's role class once where the config is read, so a broken one fails there.

    Raises:
        ScriptError: as :func:`user_role`.
    """
    user_role(ref, SnapshotSettings())
