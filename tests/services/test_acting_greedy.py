"""PSRO's greedy members: frozen snapshots take their most likely action while the trainable
player samples, acting locally and through the inference servers."""

from __future__ import annotations

import numpy as np
import pytest

from msagent.runtime import Solver, launch, publish
from msagent.services.env_worker import Acting
from msagent.services.inference import InferenceServer
from msagent.services.model_pool import ModelPoolService
from msagent.services.params import params_topic
from msagent.vocabulary import PolicyRef
from tests.services.helpers import SCRIPTS, cartpole_obs, cartpole_policy

ROWS = 400


@pytest.mark.parametrize("central", [False, True])
@pytest.mark.parametrize("frozen_greedy", [False, True])
def test_frozen_snapshots_act_greedily_only_when_asked(inline_only: str, central: bool,
                                                       frozen_greedy: bool) -> None:
    pool = launch(ModelPoolService)
    frozen, trainable = cartpole_policy(3), cartpole_policy(4)
    key = Solver().retrieve(pool, "push", "main", frozen.get_weights())
    publish(params_topic("main"), trainable.get_weights())
    if central:
        launch(InferenceServer, args=(SCRIPTS,))
    acting = Acting(["main"], None if central else lambda _: cartpole_policy(0), {}, 4, central,
                    frozen_greedy=frozen_greedy)
    obs = cartpole_obs(ROWS, seed=5)
    snapshot, player = PolicyRef.snapshot(key), PolicyRef.player("main")
    acted = acting({snapshot: (obs, None, None), player: (obs, None, None)})
    top = {ref: net.act(obs, deterministic=True).actions
           for ref, net in ((snapshot, frozen), (player, trainable))}
    assert acted[snapshot].key == key
    frozen_same = (acted[snapshot].out.actions == top[snapshot]).mean()
    assert frozen_same == 1.0 if frozen_greedy else frozen_same < 0.9
    assert (acted[player].out.actions == top[player]).mean() < 0.9  # the learner still samples
