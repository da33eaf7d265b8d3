"""The league's events as database rows (plain dicts keyed by the schema's column names)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from msagent.league import League
from msagent.league.players import Historical, Player
from msagent.vocabulary import EpisodeResult


def match_row(result: EpisodeResult, time: float, seq: int, generation: int) -> dict[str, Any]:
    """One accepted result (its match is set: the league refuses results without one)."""
    match = result.match
    assert match is not None and result.outcome is not None
    opponents = match.opponents()
    returns = list(result.seat_returns) or [result.episode_return]
    return {"generation": generation, "seq": seq, "time": time, "learner": str(match.learner),
            "opponent": str(opponents[0]) if opponents else None,
            "learner_seat": match.learner_seat, "seats": [str(r) for r in match.seats],
            "outcome": float(result.outcome), "returns": [float(r) for r in returns],
            "length": int(result.length), "version": int(result.policy.version)}


def rating_rows(league: League, participants: Iterable[str], time: float) -> list[dict[str, Any]]:
    """The ratings of ``participants`` now, at the league's result count."""
    rows = []
    for pid in sorted(set(participants)):
        mu, sigma = league.openskill.mu_sigma(pid)
        rows.append({"time": time, "seq": league.reported, "participant": pid,
                     "elo": league.elo.rating(pid), "openskill_mu": mu, "openskill_sigma": sigma})
    return rows


def player_row(player: Player, time: float) -> dict[str, Any]:
    """A trainable player as it stands."""
    return {"player_id": player.id, "role": player.role, "parent": player.parent,
            "resets": player.resets, "updated_at": time}


def snapshot_row(snapshot: Historical, updates: int | None, generation: int) -> dict[str, Any]:
    """A frozen snapshot as the league added it (``updates`` None: not known, an import)."""
    return {"participant": snapshot.id, "player_id": snapshot.owner,
            "version": int(snapshot.ref.version or 0), "role": snapshot.role,
            "parent": snapshot.parent, "created_at": snapshot.created_s, "updates": updates,
            "generation": generation, "weights_deleted": False}


def logged_match_row(entry: dict[str, Any], seq: int) -> dict[str, Any]:
    """A match from the capped match log of a run's checkpointed state (imported from a run
    made before the database: no returns were kept, generation 0)."""
    seats, seat = list(entry["seats"]), int(entry["learner_seat"])
    others = [s for i, s in enumerate(seats) if i != seat]
    return {"generation": 0, "seq": seq, "time": float(entry["time"]), "learner": seats[seat],
            "opponent": others[0] if others else None, "learner_seat": seat, "seats": seats,
            "outcome": float(entry["outcome"]), "returns": [], "length": int(entry["length"]),
            "version": int(entry["version"])}


def evaluation_row(result: EpisodeResult, time: float, generation: int) -> dict[str, Any]:
    """One evaluation game of the evaluated player (its match names the seats)."""
    match = result.match
    opponents = match.opponents() if match is not None else ()
    return {"generation": generation, "time": time, "player": result.policy.policy_id,
            "version": int(result.policy.version),
            "opponent": str(opponents[0]) if opponents else None,
            "seat": match.learner_seat if match is not None else 0,
            "outcome": result.outcome, "episode_return": float(result.episode_return),
            "length": int(result.length)}


def nash_conv_row(measure: dict[str, Any]) -> dict[str, Any]:
    """One NashConv measure (``{"player", "version", "nash_conv", "time"}``)."""
    version = measure.get("version")
    return {"time": float(measure.get("time") or 0.0), "player": str(measure["player"]),
            "version": None if version is None else int(version),
            "value": float(measure["nash_conv"])}


def exploit_row(record: dict[str, Any]) -> dict[str, Any]:
    """One ``msagent exploit`` record against the run."""
    target = record["target"]
    return {"time": float(record["time"]), "player": str(target["policy"]),
            "checkpoint_step": target.get("checkpoint_step"), "budget": str(record["budget"]),
            "env_steps": record.get("env_steps"), "games": int(record["games"]),
            "win_rate": float(record["win_rate"]), "mean_return": float(record["mean_return"]),
            "record": record}


def participants_of(result: EpisodeResult) -> list[str]:
    """Every participant of a result's match (whose ratings it moved)."""
    return [] if result.match is None else [str(r) for r in result.match.seats]
