"""Rendering a saved league state: ladder, lineage, heatmap."""

from __future__ import annotations

import json
from pathlib import Path

from msagent.league import ladder_text, lineage_text, save_heatmap
from msagent.league.report import heatmap_ids
from msagent.vocabulary import ModelKey, PolicyRef
from tests.league.helpers import play, started


def _state() -> dict:
    """A saved league with a winner, a reset and a chain of snapshots."""
    league = started(payoff_decay=1.0)
    play(league, "main", PolicyRef.parse("le:0"), +1, n=5)
    league.add_snapshot("main", ModelKey("main", 10), 10)
    league.add_snapshot("me", ModelKey("me", 10), 10)  # resets me to me:0
    return json.loads(json.dumps(league.state_dict()))


def test_ladder_lists_participants_best_first() -> None:
    text = ladder_text(_state())
    for pid in ("main", "me", "le", "main:0", "main:10", "le:0"):
        assert pid in text
    rows = [line.split("│")[1:-1] for line in text.splitlines() if line.startswith("│")]
    first, last = [c.strip() for c in rows[0]], [c.strip() for c in rows[-1]]
    assert first[:3] == ["1", "main", "training"] and int(first[3]) > 1200
    assert last[1:3] == ["le:0", "snapshot"] and int(last[3]) < 1200


def test_lineage_shows_parents_and_resets() -> None:
    text = lineage_text(_state())
    assert "- main:10 (from main:0)" in text
    assert "me [main_exploiter, training, resets: 1, from me:0]" in text
    lines = text.splitlines()
    assert lines[0] == "- main:0"
    me10 = next(line for line in lines if line.strip().startswith("- me:10"))
    assert me10.startswith("  - ")  # me:0 has two children: me:10 and me itself


def test_heatmap_is_a_png(tmp_path: Path) -> None:
    path = save_heatmap(_state(), tmp_path / "sub" / "payoff.png")
    assert path.is_file() and path.stat().st_size > 1000
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _crowded(snapshots: int) -> dict:
    """A saved league whose main agent has ``snapshots`` snapshots, each of which played main
    once: the newer half won, the older half lost; main also played a bot."""
    league = started(payoff_decay=1.0, bots={"random": "r.py"})
    play(league, "main", PolicyRef.bot("random"), +1.0)
    for version in range(1, snapshots + 1):
        league.add_snapshot("main", ModelKey("main", version), 10 * version)
        main_outcome = -1.0 if version > snapshots // 2 else +1.0
        play(league, "main", PolicyRef.parse(f"main:{version}"), main_outcome)
    return json.loads(json.dumps(league.state_dict()))


def test_a_crowded_heatmap_keeps_players_bots_and_the_best_rated_snapshots(
        tmp_path: Path) -> None:
    state = _crowded(80)
    ids = heatmap_ids(state, limit=20)
    assert len(ids) == 20 and {"main", "me", "le", "bot:random"} <= set(ids)
    elo = state["elo"]["ratings"]
    snaps = [h["ref"] for h in state["historical"]]
    shown = [elo.get(pid, 1200.0) for pid in snaps if pid in ids]
    hidden = [elo.get(pid, 1200.0) for pid in snaps if pid not in ids]
    assert min(shown) >= max(hidden) > 1200.0 > elo["main:1"]  # the best-rated, no loser
    path = save_heatmap(state, tmp_path / "crowded.png", limit=20)
    from PIL import Image

    width, height = Image.open(path).size
    assert width < 2000 and height < 2000  # 86 participants in full would be ~4,100 pixels


def test_a_long_ladder_is_cut_but_keeps_the_trainable_players() -> None:
    state = _crowded(80)
    text = ladder_text(state, width=120, limit=10)
    rows = [line.split("│")[2].strip() for line in text.splitlines() if line.startswith("│")]
    assert "the first 10 of" in text
    assert {"main", "me", "le"} <= set(rows) and len(rows) <= 13
