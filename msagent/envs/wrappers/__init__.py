"""Observation and stepping wrappers over the multi-seat protocol (``msagent.envs.multi_agent``).

Each takes anything ``as_multi_agent`` accepts (an msagent game, a Gymnasium env, a PettingZoo
env, an OpenSpiel game) and is itself a ``MultiAgentEnv``, so they compose, e.g. for Atari::

    FrameStack(Resize(Grayscale(FrameSkip(boxing_v2.parallel_env(), 4)), 84, 84), 4)
"""

from msagent.envs.wrappers.base import ObservationWrapper, Wrapper
from msagent.envs.wrappers.flatten import Flatten
from msagent.envs.wrappers.frame_skip import FrameSkip
from msagent.envs.wrappers.frame_stack import FrameStack
from msagent.envs.wrappers.image import Grayscale, Resize
from msagent.envs.wrappers.noop_start import NoopStart
from msagent.envs.wrappers.pad import PadObservations, PadSeats
from msagent.envs.wrappers.reward import ClipReward, PotentialShaping
from msagent.envs.wrappers.seat_indicator import SeatIndicator

__all__ = ["ClipReward", "Flatten", "FrameSkip", "FrameStack", "Grayscale", "NoopStart",
           "ObservationWrapper", "PadObservations", "PadSeats", "PotentialShaping", "Resize",
           "SeatIndicator", "Wrapper"]
