"""The environment script of the FightingICE example: DareFightingICE, ZEN against ZEN.

The real game runs when ``FIGHTINGICE_HOME`` names a built copy (docs/games/fightingice.md);
``--set env.fake=true`` (or no ``FIGHTINGICE_HOME``) plays the protocol-level fake server.
One JVM per env, started by the env on a free loopback port.
"""

import os

from msagent.envs.games.fightingice import HOME_VARIABLE, FightingICEEnv


def make_env(fake: bool | None = None, round_frames: int = 1800, frame_skip: int = 4,
             rounds: int = 1) -> FightingICEEnv:
    """One game of ``rounds`` rounds of ``round_frames`` frames; the fake server if ``fake``
    (by default: when FIGHTINGICE_HOME is unset)."""
    if fake is None:
        fake = not os.environ.get(HOME_VARIABLE)
    return FightingICEEnv(fake=fake, round_frames=round_frames, frame_skip=frame_skip,
                          rounds=rounds)
