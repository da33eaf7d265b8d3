"""The league as a service, its typed client, and its mirror in Redis."""

from __future__ import annotations

from msagent.services.league.client import LeagueClient
from msagent.services.league.service import LeagueService
from msagent.services.league.mirror import read_league

__all__ = ["LeagueClient", "LeagueService", "read_league"]
