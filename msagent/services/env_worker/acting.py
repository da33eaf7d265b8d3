"""How an env worker decides the seats of one step: every policy a match can name, in one place.

Trainable players act with their newest parameters (a ``PolicyFollower`` per player topic),
frozen snapshots come from an LRU ``PolicyCache`` that pulls from the model pool on a miss,
and bots are user scripts. Locally each group is one forward pass; in central mode each group
is one ``predict`` request to the inference servers, which batch requests per ModelKey.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from msagent.envs.collector import Acted
from msagent.envs.match_collector import Group
from msagent.errors import InstanceDiedError, ServiceNotFoundError
from msagent.policy import ActOutput, Policy
from msagent.policy.cache import PolicyCache
from msagent.runtime import subscribe
from msagent.services.inference import InferenceClient, pull_weights
from msagent.services.params import Follower, PolicyFollower, params_topic
from msagent.vocabulary import BOT, PLAYER, ModelKey, PolicyRef, PredictRequest

INFERENCE_WAIT_S = 60.0
"""How long an env worker waits for a (replaced) inference server before it fails."""


class Acting:
    """Decides groups of seats for one env worker; ``versions`` are the players' newest held.

    Args:
        players: The trainable players whose topics are followed.
        build: Makes a fresh policy of a policy id's shape (None in central mode).
        bots: Bot name -> bot (``msagent.envs.bots.load_bots``).
        cache_size: Snapshots kept in the local LRU cache.
        central: Ask the inference servers instead of acting locally.
        deterministic: Take the most likely legal action (evaluation) instead of sampling.
        frozen_greedy: Frozen snapshots take their most likely legal action, while trainable
            players sample (PSRO's ``member_play = "greedy"``).
    """

    def __init__(self, players: list[str], build: Callable[[str], Policy] | None,
                 bots: dict[str, Any], cache_size: int, central: bool,
                 deterministic: bool = False, frozen_greedy: bool = False) -> None:
        self.central, self.deterministic = central, deterministic
        self.frozen_greedy = deterministic or frozen_greedy
        self.bots = dict(bots)
        self.versions = {p: 0 for p in players}
        if central:
            self._subs = {p: subscribe(params_topic(p), values=False) for p in players}
        else:
            self._followers = {p: PolicyFollower(build(p), p) for p in players}
            self.cache = PolicyCache(build, pull_weights, cache_size)
        self.stop = threading.Event()

    def follow_with(self, player: str, follower: Follower) -> None:
        """Play ``player``'s seats with ``follower`` instead of its topic (local acting only)."""
        if self.central:
            raise ValueError("follow_with needs local acting (central mode asks the servers)")
        self._followers[player] = follower

    def held(self, player: str) -> tuple[Policy, int]:
        """The policy ``player``'s seats act with, and its version (local acting only)."""
        if self.central:
            raise ValueError("held needs local acting (central mode asks the servers)")
        follower = self._followers[player]
        return follower.policy, follower.version

    def __call__(self, groups: dict[PolicyRef, Group]) -> dict[PolicyRef, Acted]:
        """One decision per group: bots by script, policies locally or centrally."""
        return {ref: self._decide(ref, *group) for ref, group in groups.items()}

    def _decide(self, ref: PolicyRef, obs: np.ndarray, masks: np.ndarray | None,
                states: np.ndarray | None = None) -> Acted:
        """The actions of one group (``states``: recurrent states, None when fresh)."""
        if ref.kind == BOT:
            actions = self.bots[ref.name].act_batch(obs, masks)
            zeros = np.zeros(len(obs), np.float32)
            return Acted(ActOutput(np.asarray(actions), zeros, zeros), ModelKey(str(ref), 0))
        if self.central:
            return self._predict(ref, obs, masks, states)
        if ref.kind == PLAYER:
            follower = self._followers[ref.name]
            return Acted(follower.policy.act(obs, masks, self.deterministic, state=states),
                         ModelKey(ref.name, follower.version))
        # a frozen snapshot's seat is never trained on: its values are not needed
        return Acted(self.cache.get(ref.key).act(obs, masks, self.frozen_greedy, values=False,
                                                 state=states), ref.key)

    def _greedy(self, trainable: bool) -> bool:
        """Whether a seat of this kind takes its most likely action."""
        return self.deterministic if trainable else self.frozen_greedy

    def _predict(self, ref: PolicyRef, obs: np.ndarray, masks: np.ndarray | None,
                 states: np.ndarray | None) -> Acted:
        """Ask the inference servers, waiting for a replaced server up to INFERENCE_WAIT_S."""
        trainable = ref.kind == PLAYER
        request = PredictRequest(obs, ref.name, self.versions.get(ref.name, 0) if trainable
                                 else 0, None if trainable else ref.version, masks,
                                 values=trainable,  # a frozen seat is never trained on
                                 state=states, greedy=self._greedy(trainable))
        deadline = time.monotonic() + INFERENCE_WAIT_S
        while True:
            try:
                return InferenceClient.predict(request)
            except (InstanceDiedError, ServiceNotFoundError):
                # the server died: the supervisor starts a replacement; wait for it
                if time.monotonic() > deadline or self.stop.is_set():
                    raise
                time.sleep(0.2)

    def wait_for(self, player: str, version: int) -> int:
        """Block until ``player``'s parameters of at least ``version`` are held (or stop)."""
        if self.central:
            sub, held = self._subs[player], self.versions[player]
            while held < version and not self.stop.is_set():
                found = sub.wait_newer(held, timeout_s=0.5)
                held = found[0] if found else held
        else:
            held = self._followers[player].wait_for(version, self.stop)
        self.versions[player] = held
        return held

    def refresh(self) -> None:
        """Pick up every player's newest parameters, never waiting (async mode)."""
        for player in self.versions:
            if self.central:
                self.versions[player] = max(self.versions[player],
                                            self._subs[player].latest()[0])
            else:
                self.versions[player] = self._followers[player].refresh()
