"""The environment script of the football examples: a Google Research Football scenario.

gfootball runs in a child process from its own virtual environment; set it up once with
``bash scripts/setup_football.sh``. The ``[env]`` table of the TOML gives the parameters.
"""

from msagent.envs.games.football import FootballEnv


def make_env(scenario: str = "academy_empty_goal_close", representation: str = "simple115v2",
             rewards: str = "scoring", left_players: int = 1, right_players: int = 0,
             python: str | None = None, builtin_ai: bool = False) -> FootballEnv:
    """One gfootball game; ``left_players`` + ``right_players`` controlled seats (the rest,
    and a side with 0, are played by the built-in AI); ``builtin_ai`` lets a bot hand its seat
    to the built-in AI (``bots/builtin_ai_bot.py``)."""
    return FootballEnv(scenario=scenario, representation=representation, rewards=rewards,
                       left_players=left_players, right_players=right_players, python=python,
                       builtin_ai=builtin_ai)
