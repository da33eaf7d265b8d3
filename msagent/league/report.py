"""Render a league's saved state (``League.state_dict()``): Elo ladder, win-rate heatmap, lineage.

Everything here reads the plain state, so a checkpoint's league can be shown without services.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from msagent.league.payoff import PayoffTable
from msagent.league.ratings import Elo, OpenSkillRating


def _payoff(state: Mapping[str, Any]) -> PayoffTable:
    """The payoff table of a league state."""
    table = PayoffTable()
    table.load_state_dict(state["payoff"])
    return table


def participant_ids(state: Mapping[str, Any]) -> list[str]:
    """Players, then snapshots, then anyone else who played (bots), without repeats."""
    ids = [p["id"] for p in state["players"]] + [h["ref"] for h in state["historical"]]
    return list(dict.fromkeys(ids + _payoff(state).participants()))


def _games(table: PayoffTable, pid: str, ids: list[str]) -> float:
    """Decayed games ``pid`` played against all of ``ids``."""
    return sum(table.games(pid, other) for other in ids if other != pid)


def ladder_text(state: Mapping[str, Any], width: int = 100, limit: int | None = None) -> str:
    """The Elo ladder (with OpenSkill ordinals and decayed games) as a text table; ``limit``:
    only its first rows, and the trainable players wherever they stand."""
    elo, skill, table = Elo(), OpenSkillRating(), _payoff(state)
    elo.load_state_dict(state["elo"])
    skill.load_state_dict(state["openskill"])
    ids = participant_ids(state)
    trainable = {p["id"] for p in state["players"]}
    rows = _by_elo(elo, ids)
    ranks = {pid: rank for rank, pid in enumerate(rows, 1)}
    title = "League ladder (Elo)"
    if limit is not None and len(rows) > limit:
        rows = [pid for pid in rows if ranks[pid] <= limit or pid in trainable]
        title += f": the first {limit} of {len(ids)} and the trainable players"
    out = Table(title=title)
    for name in ("#", "participant", "kind", "Elo", "OpenSkill", "games"):
        out.add_column(name, justify="left" if name in ("participant", "kind") else "right")
    for pid in rows:
        rank = ranks[pid]
        kind = "training" if pid in trainable else "bot" if pid.startswith("bot:") else "snapshot"
        out.add_row(str(rank), pid, kind, f"{elo.rating(pid):.0f}", f"{skill.rating(pid):.2f}",
                    f"{_games(table, pid, ids):.1f}")
    return _render(out, width)


def _render(table: Table, width: int) -> str:
    """A rich table as plain text."""
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    console.print(table)
    return console.file.getvalue()  # type: ignore[attr-defined]


HEATMAP_MAX = 48
"""Most participants a heatmap PNG shows: its side grows with them (0.45 inch each), and a
league of 700 snapshots drawn in full is a 31,000-pixel square that takes over 20 GB to render.
``msagent dashboard`` shows every participant."""


def _by_elo(elo: Elo, ids: Iterable[str]) -> list[str]:
    """``ids`` best Elo first (ties by id): the ladder's order."""
    return sorted(ids, key=lambda pid: (-elo.rating(pid), pid))


def heatmap_ids(state: Mapping[str, Any], limit: int = HEATMAP_MAX,
                ids: list[str] | None = None) -> list[str]:
    """The participants a heatmap shows: the trainable players and the bots always, then the
    best-rated snapshots (Elo) up to ``limit`` in all, in ``participant_ids`` order (``ids``:
    that list, when the caller has it already)."""
    ids = participant_ids(state) if ids is None else ids
    if len(ids) <= limit:
        return ids
    elo = Elo()
    elo.load_state_dict(state["elo"])
    trainable = {p["id"] for p in state["players"]}
    always = [pid for pid in ids if pid in trainable or pid.startswith("bot:")]
    others = _by_elo(elo, (pid for pid in ids if pid not in always))
    shown = set(always + others[:max(0, limit - len(always))])
    return [pid for pid in ids if pid in shown]


def save_heatmap(state: Mapping[str, Any], path: str | Path, limit: int = HEATMAP_MAX) -> Path:
    """Write the row-vs-column win-rate heatmap as a PNG (at most ``limit`` participants: the
    players, the bots and the best-rated snapshots); return its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    everyone = participant_ids(state)
    ids, total = heatmap_ids(state, limit, everyone), len(everyone)
    rates = np.ma.masked_invalid(_payoff(state).matrix(ids))
    size = 2.0 + 0.45 * len(ids)
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    image = ax.imshow(rates, cmap="RdYlGn", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(len(ids)), ids, rotation=90)
    ax.set_yticks(range(len(ids)), ids)
    ax.set_xlabel("opponent")
    ax.set_ylabel("player")
    shown = "" if len(ids) == total else f"; {len(ids)} of {total}: players, bots, best Elo"
    ax.set_title(f"win rate (row vs column{shown})")
    fig.colorbar(image, ax=ax)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def lineage_text(state: Mapping[str, Any]) -> str:
    """Snapshots and players as a tree of who continued from whom (a chain stays at one depth)."""
    children: dict[str | None, list[tuple[str, str]]] = {}
    known = {h["ref"] for h in state["historical"]}
    for h in state["historical"]:
        label = h["ref"] + (f" (from {h['parent']})" if h["parent"] in known else "")
        children.setdefault(_root_parent(h["parent"], known), []).append((h["ref"], label))
    for p in state["players"]:
        source = f", from {p['parent']}" if p["parent"] in known else ""
        label = f"{p['id']} [{p['role']}, training, resets: {p['resets']}{source}]"
        children.setdefault(_root_parent(p["parent"], known), []).append((p["id"], label))
    lines: list[str] = []
    stack = [(node, 0) for node in reversed(children.get(None, []))]
    while stack:
        (node, label), depth = stack.pop()
        lines.append("  " * depth + "- " + label)
        kids = children.get(node, []) if node in known else []
        step = 0 if len(kids) == 1 else 1
        stack.extend((kid, depth + step) for kid in reversed(kids))
    return "\n".join(lines) + "\n"


def _root_parent(parent: str | None, known: set[str]) -> str | None:
    """The parent as a tree key: None when it is missing or not a known snapshot."""
    return parent if parent in known else None
