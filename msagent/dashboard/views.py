"""What the dashboard shows, computed from a run's files: facts, ladder, payoff, timeline,
lineage and PSRO, as plain JSON-able data (the page only draws it).

Each section is built on its own; one that cannot be read from the run's files (a newer or
older layout, a half-written run) becomes ``None`` plus a warning, and the others still show.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from msagent.dashboard.players import player_labels
from msagent.dashboard.reader import RunFiles

SECTIONS = ("ladder", "payoff", "timeline", "lineage", "psro", "exploits")
MATCHES_SHOWN = 20


def run_view(files: RunFiles, run_id: str) -> dict[str, Any]:
    """The whole view of one run: facts, then each section (None where not applicable)."""
    state = files.state or {}
    league = state.get("league") if isinstance(state.get("league"), dict) else None
    view: dict[str, Any] = {"id": run_id, "facts": facts(files, state), "warnings": files.warnings}
    builders: dict[str, Callable[[], Any]] = {
        "ladder": lambda: ladder(league, player_labels(files.config)) if league else None,
        "payoff": lambda: payoff(league) if league else None,
        "timeline": lambda: timeline(files.timeline, league),
        "lineage": lambda: lineage(league) if league else None,
        "psro": lambda: psro(_psro_state(state)),
        "exploits": lambda: exploits(files.exploits),
    }
    for name, build in builders.items():
        try:
            view[name] = build()
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            view[name] = None
            files.warnings.append(f"the {name} could not be read from this run's files "
                                  f"({type(exc).__name__}: {exc})"[:300])
    view["matches"] = _matches(league, files.history)
    return view


def facts(files: RunFiles, state: dict[str, Any]) -> dict[str, Any]:
    """Name, kind, progress, services, replacements, checkpoints, config and the feed's age."""
    return {"name": files.marker.get("name", files.path.name), "path": str(files.path),
            "created": files.marker.get("created"), "run_id": state.get("run_id"),
            "kind": state.get("kind", "unknown"), "source": files.source,
            "msagent": state.get("msagent"), "format": state.get("format"),
            "written_s": state.get("written_s"), "progress": state.get("progress") or {},
            "services": state.get("services") or {},
            "placements": state.get("placements") or {},
            "replacements": state.get("replacements") or [],
            "checkpoint": state.get("checkpoint", files.checkpoints[-1] if files.checkpoints
                                    else None), "checkpoints": files.checkpoints,
            "game": state.get("game"), "config": files.config}


def participants(league: dict[str, Any]) -> list[str]:
    """Players, snapshots, then anyone else who played or is rated (bots), without repeats."""
    ids = [p["id"] for p in league.get("players", [])]
    ids += [h["ref"] for h in league.get("historical", [])]
    for a, b, *_ in league.get("payoff", {}).get("pairs", []):
        ids += [a, b]
    return list(dict.fromkeys(ids))


def ladder(league: dict[str, Any], labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One row per participant, best Elo first: kind, role, parent, ratings, games, win rate,
    and (``labels``, by player) the network and algorithm it was trained with; with a league
    mixture, each participant's weight in it per seat."""
    labels = labels or {}
    elo = _elo_of(league)
    skill = league.get("openskill", {}).get("ratings", {})
    totals = _field_totals(league)
    players = {p["id"]: p for p in league.get("players", [])}
    snaps = {h["ref"]: h for h in league.get("historical", [])}
    seats = (league.get("mixture") or {}).get("seats") or []
    rows = []
    for pid in participants(league):
        info = players.get(pid) or snaps.get(pid) or {}
        wins, draws, games = totals.get(pid, (0.0, 0.0, 0.0))
        mu, sigma = skill.get(pid, (None, None))
        rows.append({
            "id": pid, "kind": _kind(pid, players, snaps), "role": info.get("role"),
            "owner": info.get("owner", pid if pid in players else None),
            "parent": info.get("parent"), "created_s": info.get("created_s"),
            "resets": info.get("resets"), "elo": elo(pid),
            "mu": mu, "sigma": sigma, "ordinal": None if mu is None else mu - 3 * sigma,
            "games": games, "win_rate": (wins + 0.5 * draws) / games if games else None,
            "network": labels.get(info.get("owner", pid)),
            "mixture": [seat.get(pid, 0.0) for seat in seats] if seats else None})
    return sorted(rows, key=lambda r: _by_elo(elo, r["id"]))


def payoff(league: dict[str, Any]) -> dict[str, Any]:
    """The row-vs-column win rates and decayed games of every pair of participants that
    played, best Elo first (the ladder's order)."""
    played = {pid for a, b, *_ in league.get("payoff", {}).get("pairs", []) for pid in (a, b)}
    elo = _elo_of(league)
    ids = sorted(played, key=lambda pid: _by_elo(elo, pid))
    index = {pid: i for i, pid in enumerate(ids)}
    n = len(ids)
    rate: list[list[float | None]] = [[None] * n for _ in range(n)]
    games = [[0.0] * n for _ in range(n)]
    for a, b, wins, draws, losses in league.get("payoff", {}).get("pairs", []):
        i, j, total = index[a], index[b], wins + draws + losses
        games[i][j] = games[j][i] = round(total, 3)
        if total > 0:
            rate[i][j] = (wins + 0.5 * draws) / total
            rate[j][i] = (losses + 0.5 * draws) / total
    return {"ids": ids, "rate": rate, "games": games,
            "min_games": league.get("payoff", {}).get("min_games", 0)}


def _elo_of(league: dict[str, Any]) -> Callable[[str], float]:
    """A participant's Elo (the league's start rating for one not rated yet)."""
    ratings = league.get("elo", {}).get("ratings", {})
    start = float(league.get("elo", {}).get("start", 1200.0))
    return lambda pid: float(ratings.get(pid, start))


def _by_elo(elo: Callable[[str], float], pid: str) -> tuple[float, str]:
    """The sort key of the ladder's order, shared by the heatmap: best Elo first, then id."""
    return -elo(pid), pid


def lineage(league: dict[str, Any]) -> dict[str, Any]:
    """Snapshots as nodes (owner, role, time) and parent edges; an edge is a reset when the
    child's owner did not simply continue from its own previous snapshot."""
    snaps = league.get("historical", [])
    nodes = [{"id": h["ref"], "owner": h["owner"], "role": h["role"],
              "created_s": h["created_s"], "parent": h["parent"]} for h in snaps]
    nodes += [{"id": p["id"], "owner": p["id"], "role": p["role"], "created_s": None,
               "parent": p.get("parent"), "training": True, "resets": p.get("resets", 0)}
              for p in league.get("players", [])]
    previous: dict[str, str] = {}
    edges = []
    for node in nodes:
        parent = node["parent"]
        if parent is not None:
            expected = previous.get(node["owner"])
            edges.append({"parent": parent, "child": node["id"],
                          "reset": expected is not None and parent != expected})
        if not node.get("training"):
            previous[node["owner"]] = node["id"]
    return {"nodes": nodes, "edges": edges}


def timeline(points: list[dict[str, Any]], league: dict[str, Any] | None) -> dict[str, Any]:
    """Series over wall time: progress, the trainable players' and bots' Elo, eval win rates,
    the evaluated player's NashConv (small OpenSpiel games)."""
    shown = [p["id"] for p in (league or {}).get("players", [])]
    shown += sorted({pid for p in points for pid in p.get("elo", {}) if pid.startswith("bot:")})
    t0 = points[0]["t"] if points else 0.0
    return {
        "t": [p["t"] - t0 for p in points],
        "env_steps": [p.get("progress", {}).get("env_steps") for p in points],
        "steps_per_s": [p.get("progress", {}).get("steps_per_s") for p in points],
        "mean_return": [p.get("progress", {}).get("mean_return") for p in points],
        "elo": {pid: [p.get("elo", {}).get(pid) for p in points] for pid in shown},
        "eval": {label: [p.get("eval", {}).get(label) for p in points]
                 for label in sorted({k for p in points for k in p.get("eval", {})})},
        "nash_conv": {pid: [p.get("nash_conv", {}).get(pid) for p in points]
                      for pid in sorted({k for p in points for k in p.get("nash_conv", {})})},
    }


def exploits(records: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """``msagent exploit``'s records, oldest first: when, whom, the budget, the trained best
    response's mean return and win rate with their intervals, the exact value where known."""
    if not records:
        return None
    return [{"time": r["time"], "policy": r["target"]["policy"],
             "step": r["target"]["checkpoint_step"], "budget": r["budget"],
             "env_steps": r.get("env_steps"), "games": r["games"],
             "mean_return": _finite(r["mean_return"]),
             "return_interval": [_finite(v) for v in r["return_interval"]],
             "win_rate": _finite(r["win_rate"]),
             "win_interval": [_finite(v) for v in r["win_interval"]],
             "exact": _finite((r.get("exact") or {}).get("mean"))} for r in records]


def psro(state: dict[str, Any] | None) -> dict[str, Any] | None:
    """NashConv per iteration, and each population's meta-strategy per iteration (members
    that did not exist yet weigh 0)."""
    if not state:
        return None
    history = state["history"]
    populations = []
    for k, members in enumerate(state["populations"]):
        weights = [[(r["meta"][k][i] if i < len(r["meta"][k]) else 0.0) for r in history]
                   for i in range(len(members))]
        populations.append({"members": members, "weights": weights})
    return {"iterations": [r["iteration"] for r in history],
            "nash_conv": [_finite(r.get("nash_conv")) for r in history],
            "episodes": [r.get("episodes", 0) for r in history],
            "symmetric": state.get("symmetric"), "populations": populations}


def _psro_state(state: dict[str, Any]) -> dict[str, Any] | None:
    """The PSRO state of an exact run (top level) or of an RL-oracle league (inside it)."""
    league = state.get("league")
    return state.get("psro") or (league.get("psro") if isinstance(league, dict) else None)


def _field_totals(league: dict[str, Any]) -> dict[str, tuple[float, float, float]]:
    """Each participant's decayed (wins, draws, games) against everyone."""
    out: dict[str, list[float]] = {}
    for a, b, wins, draws, losses in league.get("payoff", {}).get("pairs", []):
        total = wins + draws + losses
        for pid, won in ((a, wins), (b, losses)):
            acc = out.setdefault(pid, [0.0, 0.0, 0.0])
            acc[0], acc[1], acc[2] = acc[0] + won, acc[1] + draws, acc[2] + total
    return {pid: (w, d, g) for pid, (w, d, g) in out.items()}


def _kind(pid: str, players: dict, snaps: dict) -> str:
    """``training``, ``snapshot`` or ``bot``."""
    return "training" if pid in players else "snapshot" if pid in snaps else "bot"


def _matches(league: dict[str, Any] | None,
             history: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """How many matches were reported, and the newest few: from the league database where
    the run has one (every result of every generation), else the state's capped match log."""
    if history is not None:
        return {"reported": history["matches"], "newest": history["newest"],
                "generations": history["generations"], "source": "database"}
    if not league:
        return None
    log = league.get("match_log", [])
    return {"reported": league.get("reported", len(log)), "newest": log[-MATCHES_SHOWN:][::-1],
            "source": "state"}


def _finite(value: Any) -> float | None:
    """A number, or None for missing and non-finite values."""
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None
