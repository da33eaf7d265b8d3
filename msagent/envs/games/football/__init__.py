"""Google Research Football (gfootball) for msagent, run in a child process from its own
virtual environment (``bash scripts/setup_football.sh``); see ``docs/games/football.md``."""

from msagent.envs.games.football.child import FootballDiedError, football_python
from msagent.envs.games.football.env import ACTIONS, REPRESENTATIONS, FootballEnv

__all__ = ["ACTIONS", "REPRESENTATIONS", "FootballDiedError", "FootballEnv", "football_python"]
