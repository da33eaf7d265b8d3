"""A stream's fragments carry the oldest and the newest version that acted them."""

from __future__ import annotations

import numpy as np

from msagent.envs.streams import Stream
from msagent.vocabulary import ModelKey


def test_a_fragment_is_labelled_with_its_oldest_and_newest_acting_versions() -> None:
    # a second seat's fragment fills slowly, while the learner moves on: labelled by its
    # first step alone it looked as old as its oldest step, and learners dropped it
    stream, obs = Stream(2), np.zeros(3, np.float32)
    for version in (3, 5, 6):  # each decision closes the one before
        stream.decide(obs, 0, -0.5, 0.0, None, ModelKey("main", version))
        stream.reward(1.0)
    (fragment,) = stream.take()
    assert fragment.policy == ModelKey("main", 3) and fragment.latest_version == 5
    assert fragment.newest_version() == 5 and len(fragment) == 2
    stream.decide(obs, 0, -0.5, 0.0, None, ModelKey("main", 7))
    stream.end(terminated=True)
    (second,) = stream.take()  # the next one starts afresh
    assert (second.policy.version, second.newest_version()) == (6, 7)
