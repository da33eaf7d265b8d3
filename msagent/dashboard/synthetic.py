"""A synthetic league run directory of any size, in the layout ``msagent train`` writes, for the
dashboard's benchmark and tests (a real league of 200 snapshots takes hours to grow)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from msagent.league.payoff import PayoffTable
from msagent.league.ratings import Elo, OpenSkillRating
from msagent.rundir import RunDir
from msagent.rundir.feed import RunFeed

ROLES = ("main", "main_exploiter", "league_exploiter")


def synthetic_league(snapshots: int, matches: int, seed: int = 0,
                     start_s: float = 1.7e9) -> dict:
    """A league state (``League.state_dict()`` layout) with ``snapshots`` frozen snapshots of
    three players, every pair of participants played, and ``matches`` logged match results."""
    rng = np.random.default_rng(seed)
    players = [{"id": role, "role": role, "parent": None, "snapshots": [],
                "updates_at_snapshot": 0, "resets": 0} for role in ROLES]
    historical, strength = [], {}
    for k in range(snapshots):
        player = players[k % len(ROLES)]
        version = 20 * (len(player["snapshots"]) + 1)
        ref = f"{player['id']}:{version}"
        reset = player["role"] == "main_exploiter" and len(player["snapshots"]) % 5 == 4
        parent = f"main:{20 * (k // 3)}" if reset and k >= 3 else player["parent"]
        historical.append({"ref": ref, "owner": player["id"], "role": player["role"],
                           "parent": parent, "created_s": start_s + 10.0 * k})
        player["snapshots"].append(version)
        player["parent"], player["resets"] = ref, player["resets"] + int(reset)
        strength[ref] = k / max(snapshots, 1) + rng.normal(0, 0.1)
    ids = [p["id"] for p in players] + [h["ref"] for h in historical]
    strength.update({p["id"]: 1.1 for p in players})
    return _played(ids, strength, matches, rng, players, historical, start_s)


def _played(ids: list[str], strength: dict[str, float], matches: int, rng: np.random.Generator,
            players: list, historical: list, start_s: float) -> dict:
    """Payoff counts for every pair, ratings and the match log of ``matches`` results."""
    table, elo, skill, log = PayoffTable(decay=1.0, min_games=4), Elo(), OpenSkillRating(), []
    pairs = []
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            games = float(rng.integers(1, 12))
            p = 1 / (1 + np.exp(-4 * (strength[a] - strength[b])))
            wins = float(rng.binomial(int(games), p))
            pairs.append([a, b, wins, 0.0, games - wins])
    for m in range(matches):
        a, b = rng.choice(len(ids), 2, replace=False)
        p = 1 / (1 + np.exp(-4 * (strength[ids[a]] - strength[ids[b]])))
        outcome = 1.0 if rng.random() < p else -1.0
        elo.update(ids[a], ids[b], outcome)
        if m < 2000:  # OpenSkill's updates are slow; its ratings need not cover every match
            skill.update(ids[a], ids[b], outcome)
        log.append({"time": start_s + 0.05 * m, "seats": [ids[a], ids[b]], "learner_seat": 0,
                    "outcome": outcome, "length": 42, "version": m})
    payoff = {**table.state_dict(), "pairs": pairs}
    return {"version": 1, "players": players, "historical": historical, "payoff": payoff,
            "elo": elo.state_dict(), "openskill": skill.state_dict(), "match_log": log,
            "reported": matches, "rejected": 0}


def write_synthetic_run(root: Path, snapshots: int, matches: int, points: int = 360,
                        seed: int = 0, database_matches: int = 0) -> Path:
    """A run directory under ``root`` with a synthetic league's feed (and, with
    ``database_matches``, a league database of that many results); its path."""
    run = RunDir.create(root, "synthetic_league")
    run.write_config('[run]\nname = "synthetic_league"\n')
    league = synthetic_league(snapshots, matches, seed)
    if database_matches:
        write_synthetic_database(run, league, database_matches, seed)
    feed = RunFeed(run.path)
    feed.write_state({"kind": "league", "league": league, "progress": {"env_steps": 10 ** 6},
                      "services": {"EnvWorker": ["EnvWorker#0"]}, "checkpoint": None})
    with open(feed.timeline_path, "w", encoding="utf-8") as f:
        for k in range(points):
            elo = {p["id"]: 1200 + k for p in league["players"]}
            f.write(json.dumps({"t": 1.7e9 + 10 * k, "progress": {"env_steps": 1000 * k},
                                "elo": elo, "eval": {"bot:random": min(1.0, k / points)}}) + "\n")
    return run.path


def write_synthetic_database(run: RunDir, league: dict, matches: int, seed: int = 0,
                             batch: int = 50_000) -> None:
    """The run's ``league.db``: the league's snapshots, ``matches`` results among its
    participants (two a second of game time, in batches) and a rating row per 100 results."""
    from msagent.league_db import LeagueDatabase, database_url
    from msagent.league_db.rows import snapshot_row
    from msagent.league.players import Historical

    rng = np.random.default_rng(seed)
    db = LeagueDatabase(database_url("", run.path), run.run_id)
    db.start("synthetic_league", "", 0, None, 0)
    for h in league["historical"]:
        db.record_snapshot(snapshot_row(Historical.from_dict(h), 0, 0), None)
    players = [p["id"] for p in league["players"]]
    refs = players + [h["ref"] for h in league["historical"]]
    for first in range(0, matches, batch):
        n = min(batch, matches - first)
        learners, opponents = rng.integers(len(players), size=n), rng.integers(len(refs), size=n)
        outcomes = rng.choice((-1.0, 0.0, 1.0), size=n)
        rows = [{"generation": 0, "seq": first + i + 1, "time": 1.7e9 + 0.5 * (first + i),
                 "learner": players[a], "opponent": refs[b], "learner_seat": i % 2,
                 "seats": [players[a], refs[b]][:: 1 - 2 * (i % 2)], "outcome": float(o),
                 "returns": [float(o), -float(o)], "length": 42, "version": first + i}
                for i, (a, b, o) in enumerate(zip(learners, opponents, outcomes))]
        ratings = [{"time": r["time"], "seq": r["seq"], "participant": r["learner"],
                    "elo": 1200.0 + r["seq"] / 1000, "openskill_mu": 25.0,
                    "openskill_sigma": 8.0} for r in rows[::100]]
        db.record_results(rows, ratings)
    db.close()
