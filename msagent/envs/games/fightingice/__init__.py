"""DareFightingICE, the two-player fighting game, as an msagent game (``FightingICEEnv``).

The game itself (Java, no licence, on no package registry) is the user's own copy, named by
``FIGHTINGICE_HOME``; ``fake=True`` plays the protocol-level fake server instead.
"""

from msagent.envs.games.fightingice.actions import ACTIONS
from msagent.envs.games.fightingice.env import FightingICEEnv
from msagent.envs.games.fightingice.launcher import HOME_VARIABLE

__all__ = ["ACTIONS", "HOME_VARIABLE", "FightingICEEnv"]
