"""What an act function returns: the policy's output and the key of the policy that acted."""

from __future__ import annotations

from typing import NamedTuple

from msagent.policy import ActOutput
from msagent.vocabulary import ModelKey


class Acted(NamedTuple):
    """What an act function returns: the policy's output and the key of the policy that acted."""

    out: ActOutput
    key: ModelKey
