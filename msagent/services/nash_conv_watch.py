"""The evaluator's exploitability measure: a player's NashConv on a small sequential OpenSpiel
game, every so often, while the league trains."""

from __future__ import annotations

import logging
import time
from typing import Any

from msagent.psro.probe import NashConvProbe, probe_for_game

log = logging.getLogger("msagent.evaluator")


class NashConvWatch:
    """Measures one player's NashConv at most every ``every_s`` seconds, and only when the
    version it holds has moved.

    Args:
        probe: The game's probe.
        player: The player measured (for the records).
        every_s: Least time between two measures.
    """

    def __init__(self, probe: NashConvProbe, player: str, every_s: float) -> None:
        self.probe, self.player, self.every_s = probe, player, every_s
        self._next, self._version = 0.0, -1

    @classmethod
    def for_game(cls, settings: Any, game: Any) -> NashConvWatch | None:
        """The watch an evaluator's settings ask for on its game (built by ``game_factory``),
        or None (off, or a game without exact tables: logged once, saying why)."""
        if settings.nash_conv_every_s <= 0:
            return None
        probe = probe_for_game(game)
        if isinstance(probe, str):
            log.info("no live NashConv for this game: %s", probe)
            return None
        return cls(probe, settings.player, settings.nash_conv_every_s)

    def measure(self, policy: Any, version: int) -> list[dict[str, Any]]:
        """``[record]`` when it is time and ``version`` is new, else ``[]``. A record:
        ``{"player", "version", "nash_conv", "time"}`` (Unix time of the measure)."""
        now = time.monotonic()
        if now < self._next or version == self._version:
            return []
        self._next, self._version = now + self.every_s, version
        try:
            value = self.probe(policy)
        except ValueError as exc:  # a recurrent or continuous policy has no tables
            log.info("no live NashConv for this policy: %s", exc)
            self._next = float("inf")
            return []
        return [{"player": self.player, "version": version, "nash_conv": value,
                 "time": time.time()}]
