"""The league: players, payoff, matchmaking, ratings and roles, as pure Python (no runtime).

:class:`League` is the coordinator; ``msagent.services`` wraps it as a service.
"""

from msagent.league.league import League, LeagueOrder
from msagent.league.matchmaking import (
    WEIGHTINGS,
    fictitious_self_play,
    from_distribution,
    pfsp,
    pfsp_weights,
    self_play,
)
from msagent.league.payoff import PayoffTable
from msagent.league.players import Historical, Player
from msagent.league.ratings import Elo, OpenSkillRating, Rating
from msagent.league.report import ladder_text, lineage_text, save_heatmap
from msagent.league.roles import ROLES, LeagueView, Role, make_role
from msagent.league.settings import (
    ROLE_NAMES,
    LeagueExploiterSettings,
    LeagueSettings,
    MainExploiterSettings,
    MainSettings,
    PlayerSpec,
)

__all__ = [
    "Elo", "Historical", "League", "LeagueExploiterSettings", "LeagueOrder", "LeagueSettings",
    "LeagueView", "MainExploiterSettings", "MainSettings", "OpenSkillRating", "PayoffTable",
    "Player", "PlayerSpec", "ROLES", "ROLE_NAMES", "Rating", "Role", "WEIGHTINGS",
    "fictitious_self_play", "from_distribution", "ladder_text", "lineage_text", "make_role",
    "pfsp", "pfsp_weights", "save_heatmap", "self_play",
]
