"""What network and algorithm each league player trains with, read from the run's saved
config, for the ladder (a league's players may each have their own)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


def player_labels(config_text: str) -> dict[str, str]:
    """Player id -> ``"<agent script> · <algorithm>"`` (empty when the config is missing, not
    TOML, or not a league: the ladder then shows no such column's values)."""
    try:
        config = tomllib.loads(config_text) if config_text else {}
    except tomllib.TOMLDecodeError:
        return {}
    league = config.get("league")
    if not isinstance(league, dict) or not isinstance(league.get("players"), list):
        return {}
    agent = (config.get("scripts") or {}).get("agent", "")
    run_algorithm = config.get("algorithm") or {}
    labels = {}
    for entry in league["players"]:
        label = (f"{Path(str(entry.get('agent') or agent)).stem} · "
                 f"{_algorithm(entry.get('algorithm'), run_algorithm)}")
        labels.update(dict.fromkeys(_ids(entry), label))
    return labels


def _algorithm(own: Any, run: dict[str, Any]) -> str:
    """The algorithm's name: a user script's file name, else the built-in name."""
    table = {**run, **own} if isinstance(own, dict) else run
    script = table.get("script")
    return Path(str(script)).stem if script else str(table.get("name", "ppo"))


def _ids(entry: dict[str, Any]) -> list[str]:
    """The player ids an entry makes (``count`` above 1: ``<id>_0``, ``<id>_1``, ...)."""
    count = int(entry.get("count", 1))
    return [str(entry["id"])] if count == 1 else [f"{entry['id']}_{i}" for i in range(count)]
